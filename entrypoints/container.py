"""The dependency-injector container: configuration → adapters → use cases → actuator.

The only place that names concrete adapters. ``storage.backend`` selects the Storage
(memory | sqlite | postgres). Tests build ``Container(config=providers.Object(cfg))``, or
``build_container(cfg, config_path=..., environ=...)`` when a refresh must re-read the source.

Every use case is wrapped by ``entrypoints.telemetry.traced`` (one span per call). The actuator
(docs/reference/operations.md) gets the database and signing-key readiness indicators, the
bearer-token authorizer, the config reloader and the service's own metrics registry.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from operator import attrgetter, methodcaller

from dependency_injector import providers

import application.accounts.groups as groups
import application.accounts.lifecycle as accounts
import application.accounts.operator as operator
import application.accounts.users as users
import application.oauth.clients as clients
import application.oauth.consents as consents
import application.oauth.grants as oauth
import application.oauth.token_status as token_status
import application.scim.groups as scim_groups
import application.scim.users as scim_users
import application.sessions.manage as sessions
from adapters.crypto.client_assertions import JwtClientAssertions
from adapters.crypto.dpop import JwtDpopVerifier
from adapters.email_address import normalize_email
from adapters.federation.client import HttpUpstreamClient
from adapters.federation.health import FederationHealth
from adapters.health import ReadinessState
from adapters.http_sender import AiohttpSender
from adapters.mfa.totp import PyotpTotp
from adapters.webauthn.py_webauthn import PyWebAuthn
from adapters.webhook_signer import StandardWebhookSigner
from application.accounts.invitations import (
    CreateInvitation,
    ListInvitations,
    ResendInvitation,
    RevokeInvitation,
)
from application.accounts.search import SearchUsers
from application.audit.housekeeping import PurgeExpired
from application.audit.query import ListAuditEvents
from application.console.caller import ConsoleCaller
from application.console.dashboard import Dashboard
from application.console.people import AuditPeople
from application.federation.identities import OwnIdentities
from application.federation.providers import ListIdentityProviders
from application.forward_auth.check import ForwardAuth
from application.integration.delivery import WebhookDeliveryHandler
from application.integration.manage import (
    CreateWebhook,
    DeleteWebhook,
    GetWebhook,
    ListWebhookDeliveries,
    ListWebhooks,
    RotateWebhookSecret,
    TestWebhook,
    UpdateWebhook,
)
from application.login.auth import AuthService
from application.login.federated import FederatedLogin
from application.login.federated_proof import FederatedProof
from application.login.hosted import HostedLogin
from application.login.hosted_account import HostedAccount
from application.login.invitation import InvitationAcceptance
from application.login.mfa_step import MfaLogin
from application.login.passkey_step import PasskeyLogin
from application.login.signup import SignUp
from application.mfa.totp import MfaEnrolment, ResetUserMfa
from application.oauth.backchannel import BackchannelLogoutDelivery
from application.oauth.code_client import CodeClientAuthenticator
from application.oauth.code_exchange import CodeFlowGrants
from application.oauth.device import DeviceFlow
from application.oauth.device_verification import DeviceVerification
from application.oauth.interaction import Authorize
from application.oauth.pushed import PushedAuthorization
from application.oauth.userinfo import UserInfo
from application.passkeys.reauth import PasskeyProof
from application.passkeys.registration import OwnPasskeys, PasskeyAdmin, PasskeyRegistration
from application.recovery.email_change import EmailChange
from application.recovery.email_links import EmailVerification, PasswordRecovery
from application.recovery.invitation_mail import InvitationMailer
from application.scim.access import ScimAuthenticator
from application.sessions.hosted import HostedPageCaller
from application.sessions.tokens import SessionRotation, TokenIssuer
from application.shared.address_limit import AddressRateLimiter
from application.shared.outbox import DeliverOutbox
from application.shared.reauth import Reauthentication
from application.shared.settings import Live
from domain.outbox import OutboxKind
from entrypoints.config import Config
from entrypoints.config.refresh import ConfigReloader, ConfigSource, refresh_steps
from entrypoints.container_adapters import Adapters, use_case
from entrypoints.wiring import build_actuator, make_secret_sealer


def _session_idle_ttl(live: Live[Config]) -> Callable[[], int]:
    """The hosted sessions' idle lifetime in force (``oidc.session_idle_ttl``, s), read at each
    call (docs/reference/oauth-and-oidc.md)."""
    return lambda: live.current.oidc.session_idle_ttl


def _delivery_retention(live: Live[Config]) -> Callable[[], int]:
    """How long the webhook delivery log keeps a try (``webhooks.delivery_retention``, s), read
    at each call (docs/reference/webhooks.md)."""
    return lambda: live.current.webhooks.delivery_retention


def _reauthentication_window(live: Live[Config]) -> Callable[[], int]:
    """The account pages' fresh-login window in force (``ui.reauthentication_window``, s), read
    at each call (docs/reference/accounts.md)."""
    return lambda: live.current.ui.reauthentication_window


class Container(Adapters):
    """Wires the service. Every provider is a singleton per container (one per process): the
    adapters (``Adapters``), then the use cases over them, then the actuator."""

    # The adapters (``entrypoints.container_adapters.Adapters``), named for the providers below.
    config = Adapters.config
    live_config = Adapters.live_config
    auth_settings = Adapters.auth_settings
    config_source = Adapters.config_source
    clock = Adapters.clock
    bus = Adapters.bus
    telemetry = Adapters.telemetry
    storage = Adapters.storage
    hasher = Adapters.hasher
    metrics_registry = Adapters.metrics_registry
    signer = Adapters.signer
    deferred_signer = Adapters.deferred_signer
    throttle = Adapters.throttle
    email_settings = Adapters.email_settings
    outbox = Adapters.outbox

    email_verification = use_case(
        telemetry,
        EmailVerification,
        storage,
        outbox,
        clock,
        auth_settings,
        email_settings,
        bus,
        throttle,
    )
    password_recovery = use_case(
        telemetry,
        PasswordRecovery,
        storage,
        outbox,
        clock,
        auth_settings,
        email_settings,
        bus,
        throttle,
        hasher,
        providers.Object(normalize_email),
    )

    token_issuer = providers.Singleton(TokenIssuer, signer, clock, auth_settings)
    """Signs access tokens and stores refresh tokens (docs/reference/tokens-and-sessions.md)."""
    session_rotation = providers.Singleton(
        SessionRotation, storage, token_issuer, bus, clock, auth_settings
    )
    """Refresh-token rotation with reuse detection, and logout (RFC 9700 section 4.14.2)."""
    auth_service = use_case(
        telemetry,
        AuthService,
        storage=storage,
        hasher=hasher,
        signer=signer,
        bus=bus,
        clock=clock,
        settings=auth_settings,
        normalize_email=providers.Object(normalize_email),
        throttle=throttle,
        issuer=token_issuer,
        rotation=session_rotation,
        verification=email_verification,
    )

    #  Proofs of a user already holding a bearer token (docs/reference/mfa-and-passkeys.md; ADR
    # 0025).
    webauthn_settings = providers.Singleton(
        methodcaller("view", attrgetter("webauthn")), live_config
    )
    """``Live[WebAuthnSettings]``: the ``webauthn`` prefix in force."""
    webauthn = providers.Singleton(PyWebAuthn)
    passkey_proof = providers.Singleton(
        PasskeyProof, storage, webauthn, clock, auth_settings, webauthn_settings
    )
    # Login with other identity providers (``docs/reference/federation.md``), needed from here on.
    federation_settings = providers.Singleton(
        methodcaller("view", attrgetter("federation")), live_config
    )
    """``Live[FederationSettings]``: the ``federation`` prefix in force (a refresh re-reads
    the provider list)."""
    upstream_client = providers.Singleton(HttpUpstreamClient)
    """The provider client (discovery and JWKS caches); closed with the app."""
    reauthentication = providers.Singleton(
        Reauthentication, hasher, throttle, passkey_proof,
        providers.Singleton(FederatedProof, storage, upstream_client, clock, federation_settings),
    )  # fmt: skip

    email_change = use_case(
        telemetry, EmailChange, storage, outbox, clock, auth_settings, email_settings, bus,
        throttle, reauthentication, providers.Object(normalize_email),
    )  # fmt: skip
    """Changing the email by a link to the new address (docs/reference/accounts.md)."""

    # Multi-factor authentication (docs/reference/mfa-and-passkeys.md).
    totp = providers.Singleton(PyotpTotp)
    secret_sealer = providers.Singleton(make_secret_sealer, config)
    """Seals the TOTP secrets; made when the app starts (it may create ``mfa.key``)."""
    mfa_enrolment = use_case(
        telemetry, MfaEnrolment, storage, totp, secret_sealer, reauthentication, bus, clock,
        auth_settings,
    )  # fmt: skip
    mfa_login = use_case(
        telemetry,
        MfaLogin,
        storage,
        totp,
        secret_sealer,
        token_issuer,
        bus,
        clock,
        auth_settings,
        throttle,
    )
    reset_user_mfa = use_case(telemetry, ResetUserMfa, storage, bus, clock)

    # Users, roles, groups and members (docs/reference/accounts.md); one span per call.
    list_users = use_case(telemetry, users.ListUsers, storage)
    get_user = use_case(telemetry, users.GetUser, storage)
    set_role = use_case(telemetry, users.SetRole, storage, bus, clock)
    #  Sessions and the user lifecycle (docs/reference/tokens-and-sessions.md and
    # docs/reference/accounts.md).
    update_user = use_case(telemetry, accounts.UpdateUser, storage, bus, clock)
    delete_user = use_case(telemetry, accounts.DeleteUser, storage, bus, clock)
    delete_own_account = use_case(
        telemetry, accounts.DeleteOwnAccount, storage, bus, reauthentication, clock
    )
    list_sessions = use_case(telemetry, sessions.ListSessions, storage, clock)
    end_own_session = use_case(telemetry, sessions.EndOwnSession, storage, bus, clock)
    end_own_sessions = use_case(telemetry, sessions.EndOwnSessions, storage, bus, clock)
    end_other_sessions = use_case(telemetry, sessions.EndOtherSessions, storage, bus, clock)
    end_user_sessions = use_case(telemetry, sessions.EndUserSessions, storage, bus, clock)
    end_user_session = use_case(telemetry, sessions.EndUserSession, storage, bus, clock)
    search_users = use_case(telemetry, SearchUsers, storage)
    list_groups = use_case(telemetry, groups.ListGroups, storage)
    get_group = use_case(telemetry, groups.GetGroup, storage)
    create_group = use_case(telemetry, groups.CreateGroup, storage, bus, clock)
    rename_group = use_case(telemetry, groups.RenameGroup, storage, bus, clock)
    delete_group = use_case(telemetry, groups.DeleteGroup, storage, bus, clock)
    add_member = use_case(telemetry, groups.AddMember, storage, bus, clock)
    remove_member = use_case(telemetry, groups.RemoveMember, storage, bus, clock)
    # The audit log (docs/reference/operations.md).
    list_audit_events = use_case(telemetry, ListAuditEvents, storage)

    # OAuth clients (docs/reference/oauth-and-oidc.md).
    oauth_settings = providers.Singleton(methodcaller("view", attrgetter("oauth")), live_config)
    """``Live[OAuthSettings]``: the ``oauth`` prefix in force."""
    list_clients = use_case(telemetry, clients.ListClients, storage)
    get_client = use_case(telemetry, clients.GetClient, storage)
    create_client = use_case(
        telemetry, clients.CreateClient, storage, bus, clock, auth_settings, oauth_settings
    )
    update_client = use_case(
        telemetry, clients.UpdateClient, storage, bus, clock, auth_settings, oauth_settings
    )
    delete_client = use_case(telemetry, clients.DeleteClient, storage, bus, clock)
    rotate_client_secret = use_case(
        telemetry, clients.RotateClientSecret, storage, bus, clock, oauth_settings
    )
    # The consents a user gave OpenID Connect clients (docs/reference/oauth-and-oidc.md).
    list_consents = use_case(telemetry, consents.ListConsents, storage)
    revoke_consent = use_case(telemetry, consents.RevokeConsent, storage, bus, clock)
    # Passkeys (docs/reference/mfa-and-passkeys.md).
    passkey_registration = use_case(
        telemetry, PasskeyRegistration, storage, webauthn, bus, clock, auth_settings,
        webauthn_settings, reauthentication,
    )  # fmt: skip
    own_passkeys = use_case(telemetry, OwnPasskeys, storage, bus, reauthentication, clock)
    passkey_admin = use_case(telemetry, PasskeyAdmin, storage, bus, clock)
    passkey_login = use_case(
        telemetry, PasskeyLogin, storage, webauthn, token_issuer, secret_sealer, bus, clock,
        auth_settings, webauthn_settings, throttle, providers.Object(normalize_email),
    )  # fmt: skip

    client_authenticator = providers.Singleton(oauth.ClientAuthenticator, storage, bus, clock)
    dpop_verifier = providers.Singleton(JwtDpopVerifier)
    client_credentials_grant = use_case(
        telemetry, oauth.ClientCredentialsGrant, storage, bus, clock, signer, auth_settings,
        oauth_settings, client_authenticator, dpop_verifier, secret_sealer,
    )  # fmt: skip
    client_assertions = providers.Singleton(JwtClientAssertions, oauth_settings)
    """``private_key_jwt`` assertions (RFC 7523) and the ``jwks_uri`` cache; closed with the
    app. ``jwks_uri`` fetches go to public addresses only unless
    ``oauth.allow_private_jwks_uri`` (read per fetch; docs/adr/0055-jwks-uri-address-rule.md)."""
    code_client_authenticator = providers.Singleton(
        CodeClientAuthenticator, storage, bus, clock, client_authenticator, client_assertions
    )
    revocation = use_case(
        telemetry, token_status.Revocation, storage, bus, clock, signer, auth_settings,
        client_authenticator, code_client_authenticator,
    )  # fmt: skip
    introspection = use_case(
        telemetry, token_status.Introspection, storage, signer, auth_settings,
        client_authenticator, clock,
    )  # fmt: skip

    # SCIM 2.0 provisioning (docs/reference/scim.md).
    scim_authenticator = providers.Singleton(ScimAuthenticator, storage, signer, auth_settings)
    provision_user = use_case(
        telemetry, scim_users.ProvisionUser, storage, bus, clock, providers.Object(normalize_email)
    )
    list_scim_users = use_case(telemetry, scim_users.ListScimUsers, storage)
    get_scim_user = use_case(telemetry, scim_users.GetScimUser, storage)
    update_scim_user = use_case(
        telemetry, scim_users.UpdateScimUser, storage, bus, clock,
        providers.Object(normalize_email), update_user,
    )  # fmt: skip
    list_scim_groups = use_case(telemetry, scim_groups.ListScimGroups, storage)
    get_scim_group = use_case(telemetry, scim_groups.GetScimGroup, storage)
    write_scim_group = use_case(telemetry, scim_groups.WriteScimGroup, storage, bus, clock)

    # The OpenID Connect provider (docs/reference/oauth-and-oidc.md).
    oidc_settings = providers.Singleton(methodcaller("view", attrgetter("oidc")), live_config)
    """``Live[OidcSettings]``: the ``oidc`` prefix in force."""
    authorize = use_case(
        telemetry, Authorize, storage, signer, secret_sealer, bus, clock, auth_settings,
        oidc_settings,
    )  # fmt: skip
    code_flow_grants = use_case(
        telemetry, CodeFlowGrants, storage, signer, bus, clock, auth_settings, oidc_settings,
        token_issuer, session_rotation,
    )  # fmt: skip
    # The device authorization grant (RFC 8628; docs/reference/oauth-and-oidc.md).
    device_flow = use_case(
        telemetry, DeviceFlow, storage, clock, auth_settings, oidc_settings, code_flow_grants
    )
    device_verification = use_case(
        telemetry, DeviceVerification, storage, bus, clock, oidc_settings, throttle
    )
    pushed_authorization = use_case(telemetry, PushedAuthorization, storage, clock, oidc_settings)

    # The durable outbox (docs/adr/0049-durable-outbox.md), delivered by every serving process:
    # back-channel logout tokens (docs/reference/oauth-and-oidc.md), to any address (relying
    # parties often live on the operator's own network).
    backchannel_sender = providers.Singleton(AiohttpSender, allow_private=True)
    backchannel_delivery = providers.Singleton(
        BackchannelLogoutDelivery, storage, signer, backchannel_sender, clock, auth_settings,
        oidc_settings,
    )  # fmt: skip
    # Webhooks (docs/reference/webhooks.md): signed with standardwebhooks, sent through the
    # server-side request forgery guard unless webhooks.allow_private_targets (read per try).
    webhooks_settings = providers.Singleton(
        methodcaller("view", attrgetter("webhooks")), live_config
    )
    """``Live[WebhooksSettings]``: the ``webhooks`` prefix in force."""
    webhook_public_sender = providers.Singleton(AiohttpSender, allow_private=False)
    webhook_private_sender = providers.Singleton(AiohttpSender, allow_private=True)
    webhook_delivery = providers.Singleton(
        WebhookDeliveryHandler, storage, secret_sealer, providers.Singleton(StandardWebhookSigner),
        webhook_public_sender, webhook_private_sender, clock, webhooks_settings,
    )  # fmt: skip
    deliver_outbox = providers.Singleton(
        DeliverOutbox, storage, bus, clock,
        providers.Dict({OutboxKind.BACKCHANNEL_LOGOUT: backchannel_delivery,
                        OutboxKind.WEBHOOK: webhook_delivery}),
    )  # fmt: skip
    create_webhook = use_case(
        telemetry, CreateWebhook, storage, bus, clock, secret_sealer, webhooks_settings
    )
    list_webhooks = use_case(telemetry, ListWebhooks, storage)
    get_webhook = use_case(telemetry, GetWebhook, storage)
    update_webhook = use_case(telemetry, UpdateWebhook, storage, bus, clock, webhooks_settings)
    delete_webhook = use_case(telemetry, DeleteWebhook, storage, bus, clock)
    rotate_webhook_secret = use_case(
        telemetry, RotateWebhookSecret, storage, bus, clock, secret_sealer
    )
    list_webhook_deliveries = use_case(telemetry, ListWebhookDeliveries, storage)
    test_webhook = use_case(telemetry, TestWebhook, storage, clock)
    userinfo = use_case(telemetry, UserInfo, storage, signer, auth_settings, dpop_verifier, clock)
    hosted_login = use_case(
        telemetry, HostedLogin, storage, auth_service, mfa_login, passkey_login, bus, clock,
        oidc_settings,
    )  # fmt: skip
    sign_up = use_case(
        telemetry, SignUp, storage, auth_service, hosted_login, email_verification,
        secret_sealer, bus, clock, auth_settings,
    )  # fmt: skip
    """The sign-up page's use case (docs/guides/self-service.md; ADR 0042)."""

    hosted_account = use_case(
        telemetry, HostedAccount, storage, reauthentication, clock,
        providers.Callable(_reauthentication_window, live_config),
    )  # fmt: skip
    """The account pages' fresh-login rule (docs/reference/accounts.md)."""

    # Invitations (docs/reference/invitations.md).
    invitation_mailer = providers.Singleton(InvitationMailer, outbox, auth_settings)
    create_invitation = use_case(
        telemetry, CreateInvitation, storage, bus, clock, auth_settings,
        providers.Object(normalize_email), invitation_mailer,
    )  # fmt: skip
    list_invitations = use_case(telemetry, ListInvitations, storage, clock)
    resend_invitation = use_case(
        telemetry, ResendInvitation, storage, bus, clock, auth_settings, invitation_mailer
    )
    revoke_invitation = use_case(telemetry, RevokeInvitation, storage, bus, clock)
    invitation_acceptance = use_case(
        telemetry, InvitationAcceptance, storage, hasher, bus, clock, auth_settings
    )

    # Login with other identity providers (docs/reference/federation.md).
    federation_health = providers.Singleton(FederationHealth, upstream_client, federation_settings)
    """Readiness component ``federation``: the providers' discovery probed in the background
    (at start, then at most once a minute); always UP (docs/reference/federation.md)."""
    federated_login = use_case(
        telemetry, FederatedLogin, storage, upstream_client, token_issuer, bus, clock,
        auth_settings, federation_settings, providers.Object(normalize_email),
        invitation_acceptance,
    )  # fmt: skip
    own_identities = use_case(telemetry, OwnIdentities, storage, bus, clock)
    identity_providers = use_case(
        telemetry, ListIdentityProviders, federation_settings, federation_health
    )
    """The console's list of ``[[federation.providers]]`` with their readiness."""
    # Forward auth for reverse proxies (docs/reference/forward-auth.md).
    forward_auth_settings = providers.Singleton(
        methodcaller("view", attrgetter("forward_auth")), live_config
    )
    """``Live[ForwardAuthSettings]``: the ``forward_auth`` prefix in force."""
    forward_auth = use_case(
        telemetry, ForwardAuth, storage, auth_service, clock, forward_auth_settings, oidc_settings
    )
    #  The admin console (docs/reference/console.md): its caller from the hosted session; its
    # dashboard.
    console_caller = providers.Singleton(
        ConsoleCaller, storage, clock, providers.Callable(_session_idle_ttl, live_config)
    )
    dashboard = use_case(telemetry, Dashboard, storage, signer, clock)
    #  The account pages (docs/reference/accounts.md): their caller from the hosted session.
    account_caller = providers.Singleton(
        HostedPageCaller, storage, clock, providers.Callable(_session_idle_ttl, live_config)
    )
    audit_people = use_case(telemetry, AuditPeople, storage)
    """The emails behind the audit rows' ids (the console's audit log)."""

    #  Housekeeping (docs/reference/operations.md): by the server on a timer and by ``authsvc
    # purge``.
    audit_settings = providers.Singleton(methodcaller("view", attrgetter("audit")), live_config)
    """``Live[AuditSettings]``: the ``audit`` prefix in force (docs/reference/operations.md)."""
    purge_expired = use_case(
        telemetry, PurgeExpired, storage, clock, audit_settings,
        delivery_retention=providers.Callable(_delivery_retention, live_config),
    )  # fmt: skip

    # The operator's command line on the box.
    create_superadmin = use_case(
        telemetry,
        operator.CreateSuperadmin,
        storage=storage,
        bus=bus,
        hasher=hasher,
        clock=clock,
        settings=auth_settings,
        normalize_email=providers.Object(normalize_email),
    )
    # ``users set-role|set-org|disable|enable``: the use cases as the operator, naming users by
    # email (``users delete`` runs ``delete_user`` with ``email_normalizer``).
    email_normalizer = providers.Object(normalize_email)
    set_role_by_operator = providers.Singleton(operator.OperatorCommand, set_role, email_normalizer)
    set_org_by_operator = providers.Singleton(
        operator.OperatorCommand, update_user.provided.move, email_normalizer
    )
    set_disabled_by_operator = providers.Singleton(
        operator.OperatorCommand, update_user.provided.set_disabled, email_normalizer
    )

    # Actuator (docs/reference/operations.md) and configuration refresh.

    reloader = providers.Singleton(
        ConfigReloader,
        live_config,
        bus,
        config_source,
        providers.Singleton(refresh_steps, deferred_signer, telemetry),
        storage=storage,
        clock=clock,
    )
    """``POST /actuator/refresh``: all or nothing (``entrypoints.config.refresh``)."""

    readiness_state = providers.Singleton(ReadinessState)
    """DOWN once a graceful shutdown begins (``refuse_traffic()``)."""

    anonymous_write_limiter = providers.Singleton(
        AddressRateLimiter,
        providers.Singleton(methodcaller("view", attrgetter("server")), live_config),
    )
    """Token buckets per client address for writes from anyone (docs/reference/operations.md, ADR
    0028); ``server.anonymous_write_*`` read live, so a refresh changes the limit at once."""

    actuator = providers.Singleton(
        build_actuator,
        config,
        live_config,
        storage,
        deferred_signer,
        reloader,
        metrics_registry,
        readiness_state,
        bus,
        federation_health,
        auth_service.provider,
    )


def build_container(
    config: Config,
    *,
    config_path: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Container:
    """A container for ``config``, read from ``config_path`` and ``environ`` (None: the
    ``$AUTHSVC_CONFIG`` file and ``os.environ``), which ``POST /actuator/refresh`` re-reads."""
    return Container(
        config=providers.Object(config),
        config_source=providers.Object(ConfigSource(config_path, environ)),
    )
