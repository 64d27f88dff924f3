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
from typing import Any, TypeVar

from dependency_injector import containers, providers

import application.accounts.groups as groups
import application.accounts.lifecycle as accounts
import application.accounts.operator as operator
import application.accounts.users as users
import application.login.sessions as sessions
import application.oauth.clients as clients
import application.oauth.consents as consents
import application.oauth.grants as oauth
import application.oauth.token_status as token_status
from adapters.clock import SystemClock
from adapters.crypto.bcrypt_hasher import BcryptHasher
from adapters.crypto.dpop import JwtDpopVerifier
from adapters.crypto.jwt_signer import JwtSigner
from adapters.email_address import normalize_email
from adapters.events.inprocess import InProcessEventBus
from adapters.federation.client import HttpUpstreamClient
from adapters.federation.health import FederationHealth
from adapters.health import ReadinessState
from adapters.mail.console import ConsoleEmailSender
from adapters.mail.smtp import ConfiguredEmailSender, SmtpEmailSender
from adapters.metrics import ServiceMetrics, subscribe_service_metrics
from adapters.mfa.totp import PyotpTotp
from adapters.persistence.memory import MemoryLoginAttempts, MemoryStorage
from adapters.persistence.postgres import PostgresStorage
from adapters.persistence.sqlite import SqliteStorage
from adapters.webauthn.py_webauthn import PyWebAuthn
from application.accounts.search import SearchUsers
from application.audit.dashboard import Dashboard
from application.audit.housekeeping import PurgeExpired
from application.audit.query import ListAuditEvents
from application.federation.identities import OwnIdentities
from application.login.auth import AuthService
from application.login.code_exchange import CodeFlowGrants
from application.login.console import ConsoleCaller
from application.login.federated import FederatedLogin
from application.login.federated_proof import FederatedProof
from application.login.hosted import HostedLogin
from application.login.mfa_step import MfaLogin
from application.login.passkey_step import PasskeyLogin
from application.mfa.totp import MfaEnrolment, ResetUserMfa
from application.oauth.code_client import CodeClientAuthenticator
from application.oauth.interaction import Authorize
from application.oauth.userinfo import UserInfo
from application.passkeys.reauth import PasskeyProof
from application.passkeys.registration import OwnPasskeys, PasskeyAdmin, PasskeyRegistration
from application.recovery.email_links import EmailVerification, PasswordRecovery
from application.recovery.mail import Outbox
from application.shared.address_limit import AddressRateLimiter
from application.shared.reauth import Reauthentication
from application.shared.settings import Live
from application.shared.throttle import LoginThrottle
from entrypoints.config import Config
from entrypoints.config.refresh import ConfigReloader, ConfigSource, refresh_steps
from entrypoints.telemetry import Telemetry, traced
from entrypoints.wiring import Deferred, build_actuator, key_stores, make_secret_sealer
from service_actuator.metrics import new_registry

T = TypeVar("T")


def _use_case(
    telemetry: providers.Provider[Telemetry], cls: type[T], *deps: Any, **named: Any
) -> providers.Singleton[T]:
    """A singleton ``cls(*deps, **named)`` with one span per call, named after the class."""
    return providers.Singleton(
        traced, providers.Singleton(cls, *deps, **named), cls.__name__, telemetry
    )


def _client_token_ttl(live: Live[Config]) -> Callable[[], int]:
    """The client tokens' lifetime in force (``oauth.client_token_ttl``, s), read at each call:
    keys of an algorithm no longer listed verify at least that long
    (docs/reference/tokens-and-sessions.md)."""
    return lambda: live.current.oauth.client_token_ttl


def _nats_bus(url: str, channel: str) -> Any:
    """A ``NatsEventBus`` (its client library is imported only when ``events.backend`` is
    ``nats``: a start without it loads no NATS code)."""
    from adapters.events.nats_bus import NatsEventBus

    return NatsEventBus(url, channel)


def _redis_bus(url: str, channel: str) -> Any:
    """A ``RedisEventBus`` (redis-py imported only when ``events.backend`` is ``redis``)."""
    from adapters.events.redis_bus import RedisEventBus

    return RedisEventBus(url, channel)


class Container(containers.DeclarativeContainer):
    """Wires the service. Every provider is a singleton per container (one per process)."""

    config = providers.Object(Config())
    """The configuration read at start (storage and server changes need a restart)."""

    live_config = providers.Singleton(Live, config)
    """``Live[Config]``: the one configuration in force, replaced whole by a config refresh.
    Everything that reads settings after start reads them here or through a view of it."""

    auth_settings = providers.Singleton(methodcaller("view", attrgetter("auth")), live_config)
    """``Live[AuthSettings]``: a view of ``live_config``'s ``auth`` prefix (no copy), read by the
    use cases per call."""

    config_source = providers.Object(ConfigSource())
    """Where ``config`` was read from (path, environment): a refresh reads it again."""

    clock = providers.Singleton(SystemClock)
    bus = providers.Selector(
        providers.Callable(attrgetter("events.backend"), config),
        memory=providers.Singleton(InProcessEventBus),
        nats=providers.Singleton(
            _nats_bus, config.provided.events.nats_url, config.provided.events.channel
        ),
        redis=providers.Singleton(
            _redis_bus, config.provided.events.redis_url, config.provided.events.channel
        ),
    )
    """The event bus (``events.backend``): in-process, or NATS / Redis carrying shared events to
    the other instances (started and closed with the app)."""
    telemetry = providers.Singleton(Telemetry.from_settings, config.provided.telemetry)
    """Tracing (``[telemetry]``); raises ``ConfigError`` for otlp without its package."""

    storage = providers.Selector(
        providers.Callable(attrgetter("storage.backend"), config),
        memory=providers.Singleton(MemoryStorage),
        sqlite=providers.Singleton(SqliteStorage, config.provided.storage.sqlite_path),
        postgres=providers.Singleton(
            PostgresStorage,
            config.provided.storage.postgres_dsn,
            config.provided.storage.pool_min_size,
            config.provided.storage.pool_max_size,
            providers.Callable(lambda c: c.storage.postgres_schema or None, config),
        ),
    )

    hasher = providers.Singleton(BcryptHasher, auth_settings)
    metrics_registry = providers.Singleton(new_registry)
    """This container's prometheus-client registry (None without the ``metrics`` extra)."""

    service_metrics: providers.Singleton[ServiceMetrics] = providers.Singleton(
        subscribe_service_metrics, bus, metrics_registry
    )
    """Login/refresh/token counters, subscribed to the bus; instantiate once at wiring."""

    signer = providers.Singleton(
        JwtSigner.from_settings,
        config.provided.auth,
        clock,
        providers.Singleton(key_stores, config),
        providers.Callable(_client_token_ttl, live_config),
        service_metrics.provided.token_verified,
    )
    """Signs and verifies access tokens; its keys live in ``auth.key_store`` (ADR 0015); the
    keys of an algorithm left out of ``auth.algorithms`` verify as long as a client token
    lives; each verification counts in ``authsvc_tokens_verified_total`` (section 17)."""
    deferred_signer = providers.Singleton(Deferred, signer.provider)
    """The signer, built on first use (after the storage is open and migrated)."""
    database_login_attempts = providers.Singleton(methodcaller("login_attempts"), storage)
    """Failed logins in the database: shared by every worker process and instance using it."""

    login_attempts = providers.Selector(
        providers.Callable(attrgetter("storage.backend"), config),
        memory=providers.Singleton(MemoryLoginAttempts),
        sqlite=database_login_attempts,
        postgres=database_login_attempts,
    )
    throttle = providers.Singleton(LoginThrottle, login_attempts, clock, auth_settings)

    email_settings = providers.Singleton(methodcaller("view", attrgetter("email")), live_config)
    """``Live[EmailSettings]``: a view of the ``email`` prefix in force
    (docs/reference/accounts.md)."""
    email_sender = providers.Singleton(
        ConfiguredEmailSender,
        email_settings,
        providers.Singleton(ConsoleEmailSender, config.provided.email.from_address),
        providers.Singleton(SmtpEmailSender, email_settings),
    )
    outbox = providers.Singleton(Outbox, email_sender, bus, email_settings)
    """Sends messages after the commit, in the background; drained at shutdown."""
    email_verification = _use_case(
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
    password_recovery = _use_case(
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

    auth_service = _use_case(
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

    # Multi-factor authentication (docs/reference/mfa-and-passkeys.md).
    totp = providers.Singleton(PyotpTotp)
    secret_sealer = providers.Singleton(make_secret_sealer, config)
    """Seals the TOTP secrets; made when the app starts (it may create ``mfa.key``)."""
    mfa_enrolment = _use_case(
        telemetry, MfaEnrolment, storage, totp, secret_sealer, reauthentication, bus, clock,
        auth_settings,
    )  # fmt: skip
    mfa_login = _use_case(
        telemetry,
        MfaLogin,
        storage,
        totp,
        secret_sealer,
        signer,
        bus,
        clock,
        auth_settings,
        throttle,
    )
    reset_user_mfa = _use_case(telemetry, ResetUserMfa, storage, bus, clock)

    # Users, roles, groups and members (docs/reference/accounts.md); one span per call.
    list_users = _use_case(telemetry, users.ListUsers, storage)
    get_user = _use_case(telemetry, users.GetUser, storage)
    set_role = _use_case(telemetry, users.SetRole, storage, bus, clock)
    #  Sessions and the user lifecycle (docs/reference/tokens-and-sessions.md and
    # docs/reference/accounts.md).
    update_user = _use_case(telemetry, accounts.UpdateUser, storage, bus, clock)
    delete_user = _use_case(telemetry, accounts.DeleteUser, storage, bus, clock)
    delete_own_account = _use_case(
        telemetry, accounts.DeleteOwnAccount, storage, bus, reauthentication, clock
    )
    list_sessions = _use_case(telemetry, sessions.ListSessions, storage, clock)
    end_own_session = _use_case(telemetry, sessions.EndOwnSession, storage, bus, clock)
    end_own_sessions = _use_case(telemetry, sessions.EndOwnSessions, storage, bus, clock)
    end_user_sessions = _use_case(telemetry, sessions.EndUserSessions, storage, bus, clock)
    end_user_session = _use_case(telemetry, sessions.EndUserSession, storage, bus, clock)
    search_users = _use_case(telemetry, SearchUsers, storage)
    list_groups = _use_case(telemetry, groups.ListGroups, storage)
    get_group = _use_case(telemetry, groups.GetGroup, storage)
    create_group = _use_case(telemetry, groups.CreateGroup, storage, bus, clock)
    rename_group = _use_case(telemetry, groups.RenameGroup, storage, bus, clock)
    delete_group = _use_case(telemetry, groups.DeleteGroup, storage, bus, clock)
    add_member = _use_case(telemetry, groups.AddMember, storage, bus, clock)
    remove_member = _use_case(telemetry, groups.RemoveMember, storage, bus, clock)
    # The audit log (docs/reference/operations.md).
    list_audit_events = _use_case(telemetry, ListAuditEvents, storage)

    # OAuth clients (docs/reference/oauth-and-oidc.md).
    oauth_settings = providers.Singleton(methodcaller("view", attrgetter("oauth")), live_config)
    """``Live[OAuthSettings]``: the ``oauth`` prefix in force."""
    list_clients = _use_case(telemetry, clients.ListClients, storage)
    get_client = _use_case(telemetry, clients.GetClient, storage)
    create_client = _use_case(
        telemetry, clients.CreateClient, storage, bus, clock, auth_settings, oauth_settings
    )
    update_client = _use_case(
        telemetry, clients.UpdateClient, storage, bus, clock, auth_settings, oauth_settings
    )
    delete_client = _use_case(telemetry, clients.DeleteClient, storage, bus, clock)
    rotate_client_secret = _use_case(
        telemetry, clients.RotateClientSecret, storage, bus, clock, oauth_settings
    )
    # The consents a user gave OpenID Connect clients (docs/reference/oauth-and-oidc.md).
    list_consents = _use_case(telemetry, consents.ListConsents, storage)
    revoke_consent = _use_case(telemetry, consents.RevokeConsent, storage, bus, clock)
    # Passkeys (docs/reference/mfa-and-passkeys.md).
    passkey_registration = _use_case(
        telemetry, PasskeyRegistration, storage, webauthn, bus, clock, auth_settings,
        webauthn_settings, reauthentication,
    )  # fmt: skip
    own_passkeys = _use_case(telemetry, OwnPasskeys, storage, bus, reauthentication, clock)
    passkey_admin = _use_case(telemetry, PasskeyAdmin, storage, bus, clock)
    passkey_login = _use_case(
        telemetry, PasskeyLogin, storage, webauthn, signer, secret_sealer, bus, clock,
        auth_settings, webauthn_settings, throttle, providers.Object(normalize_email),
    )  # fmt: skip

    client_authenticator = providers.Singleton(oauth.ClientAuthenticator, storage, bus, clock)
    dpop_verifier = providers.Singleton(JwtDpopVerifier)
    client_credentials_grant = _use_case(
        telemetry, oauth.ClientCredentialsGrant, storage, bus, clock, signer, auth_settings,
        oauth_settings, client_authenticator, dpop_verifier, secret_sealer,
    )  # fmt: skip
    code_client_authenticator = providers.Singleton(
        CodeClientAuthenticator, storage, bus, clock, client_authenticator
    )
    revocation = _use_case(
        telemetry, token_status.Revocation, storage, bus, clock, signer, auth_settings,
        client_authenticator, code_client_authenticator,
    )  # fmt: skip
    introspection = _use_case(
        telemetry, token_status.Introspection, storage, signer, auth_settings,
        client_authenticator, clock,
    )  # fmt: skip

    # The OpenID Connect provider (docs/reference/oauth-and-oidc.md).
    oidc_settings = providers.Singleton(methodcaller("view", attrgetter("oidc")), live_config)
    """``Live[OidcSettings]``: the ``oidc`` prefix in force."""
    authorize = _use_case(
        telemetry, Authorize, storage, signer, secret_sealer, bus, clock, auth_settings,
        oidc_settings,
    )  # fmt: skip
    code_flow_grants = _use_case(
        telemetry, CodeFlowGrants, storage, signer, bus, clock, auth_settings, oidc_settings
    )
    userinfo = _use_case(telemetry, UserInfo, storage, signer, auth_settings, dpop_verifier, clock)
    hosted_login = _use_case(
        telemetry, HostedLogin, storage, auth_service, mfa_login, passkey_login, bus, clock,
        oidc_settings,
    )  # fmt: skip

    # Login with other identity providers (docs/reference/federation.md).
    federation_health = providers.Singleton(FederationHealth, upstream_client, federation_settings)
    """Readiness component ``federation``: the providers' discovery probed in the background
    (at start, then at most once a minute); always UP (docs/reference/federation.md)."""
    federated_login = _use_case(
        telemetry, FederatedLogin, storage, upstream_client, signer, bus, clock, auth_settings,
        federation_settings, providers.Object(normalize_email),
    )  # fmt: skip
    own_identities = _use_case(telemetry, OwnIdentities, storage, bus, clock)
    #  The admin console (docs/reference/console.md): its caller from the hosted session; its
    # dashboard.
    console_caller = providers.Singleton(ConsoleCaller, storage, clock, oidc_settings)
    dashboard = _use_case(telemetry, Dashboard, storage, signer, clock)

    #  Housekeeping (docs/reference/operations.md): by the server on a timer and by ``authsvc
    # purge``.
    audit_settings = providers.Singleton(methodcaller("view", attrgetter("audit")), live_config)
    """``Live[AuditSettings]``: the ``audit`` prefix in force (docs/reference/operations.md)."""
    purge_expired = _use_case(telemetry, PurgeExpired, storage, clock, audit_settings)

    # The operator's command line on the box.
    create_superadmin = _use_case(
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
