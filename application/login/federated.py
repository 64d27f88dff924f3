"""Login with other identity providers (docs/reference/federation.md; ADR 0034): the start and
callback of the browser flow, the ID token of a native app, and linking from the account page.

The use case lives in ``login/`` because it opens what every login opens — a hosted session or
a token pair, through the same ``LoginStart`` callbacks as the password, MFA and passkey logins
— and shares their rules: ``domain.login.login_refusal``, the MFA step (a federated login is
one factor), ``login.succeeded`` (``method = "federated"``, ``provider``). The provider client
is the ``UpstreamClient`` port; the identities are ``uow.identities``; the provider list is the
``federation`` prefix in force (a refresh changes it).

The callback checks, in order: ``state`` (single use — taken from storage whatever comes next —
at most ``federation.state_ttl`` old, bound to the browser by the SHA-256 of a cookie), the
provider's ``error``, ``iss`` (RFC 9207) when sent or announced, then the code exchange with
the PKCE verifier and the ID token and userinfo checks of the client. Any failure is one
``FederationFailed`` (400 ``federation_failed``) with nothing created or linked.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import secrets
from collections.abc import Mapping
from datetime import timedelta
from typing import TypeVar

import attrs

from application.events.audit import publish_failure
from application.events.catalog import (
    Event,
    LoginFailed,
    LoginSucceeded,
    UserRegistered,
)
from application.events.federation import IdentityLinked
from application.federation.settings import FederationSettings, ProviderSettings
from application.login.federated_invitation import accept_with_identity
from application.login.federated_link import LinkOffer, confirm_link, offer_link
from application.login.finish import LoginStart, finish_login, token_start
from application.login.invitation import InvitationAcceptance
from application.login.mfa_step import FEDERATED_FIRST
from application.ports import (
    Clock,
    EmailNormalizer,
    EventBus,
    FederationFailed,
    Storage,
    UnitOfWork,
    UpstreamClient,
)
from application.sessions.hosted import signed_in
from application.sessions.tokens import TokenIssuer, TokenPair
from application.shared.settings import AuthSettings, Live
from application.shared.steps import new_id
from domain import errors
from domain.federation import FederatedIdentity, FederationFlow, UpstreamIdentity
from domain.login import (
    FederatedOutcome,
    federated_account,
    native_id_token_refusal,
    new_user_email_verified,
)
from domain.model import Role, User
from domain.oidc import HostedSession

__all__ = ["METHOD", "CallbackResult", "FederatedLogin", "LoginNeeded"]

T = TypeVar("T")
log = logging.getLogger("authsvc.federation")

METHOD = "federated"
"""``login.succeeded``'s ``details.method`` and the hosted session's login method."""


class LoginNeeded(Exception):
    """Linking needs a hosted login at most ``federation.link_max_age`` old: sign in first."""


class ExistingAccount(errors.AccountExists):
    """``AccountExists`` at a browser's callback (docs/reference/federation.md), with what the
    login page needs to go on: ``email`` (the account's, the provider's email normalized; None
    when it has none) and ``return_to`` (where the federated login was heading)."""

    def __init__(self, email: str | None, return_to: str) -> None:
        super().__init__("an account with this email exists: sign in to it first")
        self.email = email
        self.return_to = return_to


@attrs.frozen
class CallbackResult:
    """What a callback did: ``return_to`` (a path of this service), and ``started`` (the
    ``LoginStart``'s result: the hosted session's cookie) or ``link_offer`` (a link from the
    account page, written only once the user confirms it) or ``mfa_token`` (the user has MFA
    on: the second step comes next, ``docs/reference/mfa-and-passkeys.md``)."""

    return_to: str
    started: str | None = None
    link_offer: LinkOffer | None = None
    mfa_token: str | None = None


def _sha256(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@attrs.frozen
class FederatedLogin:
    """See the module. ``begin`` → the provider's URL; ``callback_with`` → ``CallbackResult``;
    ``native`` → a ``TokenPair``; ``signed_in`` → the hosted session's user."""

    _storage: Storage
    _client: UpstreamClient
    _issuer: TokenIssuer
    _bus: EventBus
    _clock: Clock
    _auth: Live[AuthSettings]
    _federation: Live[FederationSettings]
    _normalize_email: EmailNormalizer
    _invitations: InvitationAcceptance | None = None

    def provider(self, provider_id: str) -> ProviderSettings:
        """The enabled provider; ``NotFound`` (404) for an unknown or disabled one."""
        provider = self._federation.current.provider(provider_id)
        if provider is None:
            raise errors.NotFound("no such identity provider")
        return provider

    def redirect_uri(self, provider_id: str) -> str:
        """``{auth.issuer}/federation/{provider}/callback``: the URI to register there."""
        return f"{self._auth.current.issuer.rstrip('/')}/federation/{provider_id}/callback"

    async def signed_in(self, cookie: str | None) -> tuple[User, HostedSession] | None:
        """The user of the live hosted session ``cookie``, or None."""
        found = await signed_in(self._storage, cookie, self._clock.now())
        return None if found is None else (found[1], found[0])

    async def confirm_link(
        self, token: str, browser: str | None, cookie: str | None, accept: bool
    ) -> str:
        """The signed-in user (hosted session ``cookie``) answers a link offer of the callback
        (``application.login.federated_link.confirm_link``); returns where to go next. Raises
        ``LoginNeeded`` without a hosted session, else what ``confirm_link`` raises."""
        found = await self.signed_in(cookie)
        if found is None:
            raise LoginNeeded
        return await confirm_link(self._storage, self._bus, self._clock, self._federation,
                                  token, browser or "", found[0].id, accept)  # fmt: skip

    async def begin(
        self, provider_id: str, return_to: str, browser: str, link_cookie: str | None = None,
        invitation_hash: str | None = None,
    ) -> str:  # fmt: skip
        """Start a login (or, with ``link_cookie`` — the hosted session's — a link; with
        ``invitation_hash``, the acceptance of that invitation, docs/reference/invitations.md)
        at the provider: store the state record bound to ``browser`` (the browser cookie's
        value) and answer the URL to send the browser to. Raises ``NotFound`` (unknown
        provider), ``LoginNeeded`` (linking without a recent enough hosted login),
        ``FederationFailed`` (the provider's discovery failed)."""
        provider = self.provider(provider_id)
        link_user: str | None = None
        now = self._clock.now()
        if link_cookie is not None:
            found = await self.signed_in(link_cookie)
            max_age = timedelta(seconds=self._federation.current.link_max_age)
            if found is None or now - found[1].auth_time > max_age:
                raise LoginNeeded
            link_user = found[0].id
        state, nonce = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        verifier = secrets.token_urlsafe(48)
        try:
            url = await self._client.authorization_url(
                provider.upstream(), self.redirect_uri(provider_id), state, nonce, _s256(verifier)
            )
        except FederationFailed as exc:
            log.warning("federation %s: start failed: %s", provider_id, exc)
            raise errors.FederationFailed("the identity provider cannot be reached") from None
        ttl = timedelta(seconds=self._federation.current.state_ttl)
        flow = FederationFlow(_sha256(state), provider_id, _sha256(browser), nonce, verifier,
                              return_to, link_user, now, now + ttl,
                              invitation_hash=invitation_hash)  # fmt: skip
        async with self._storage.begin() as uow:
            await uow.identities.put_flow(flow)
            await uow.commit()
        return url

    async def _fail(self, provider_id: str, reason: str, client: str) -> errors.FederationFailed:
        log.info("federation %s: refused: %s", provider_id, reason)
        failed = LoginFailed(None, client, reason, METHOD)
        await publish_failure(self._storage, self._bus, self._clock.now(), failed)
        return errors.FederationFailed("signing in with this provider failed")

    async def callback_with(
        self, provider_id: str, query: Mapping[str, str], browser: str | None, client: str,
        start: LoginStart[str],
    ) -> CallbackResult:  # fmt: skip
        """Finish at the callback: the checks of the module, then log in (``start``) or link.
        Raises ``NotFound`` (unknown provider), ``FederationFailed``, ``ExistingAccount`` (an
        ``AccountExists`` naming the email and the flow's ``return_to``),
        ``FederationNotAllowed``, ``AccountDisabled`` / ``EmailNotVerified``, ``Conflict``
        (linking an identity another user has)."""
        provider = self.provider(provider_id)
        upstream = provider.upstream()
        state = query.get("state", "")
        if not state or len(state) > 512:
            raise await self._fail(provider_id, "state_missing", client)
        if not browser or len(browser) > 128:
            raise await self._fail(provider_id, "state_other_browser", client)
        async with self._storage.begin() as uow:  # only this browser's state is taken
            flow = await uow.identities.take_flow(_sha256(state), _sha256(browser))
            await uow.commit()
        now = self._clock.now()
        if flow is None or flow.provider != provider_id or flow.upstream is not None:
            raise await self._fail(provider_id, "state_unknown", client)
        if flow.expires_at <= now:
            raise await self._fail(provider_id, "state_expired", client)
        if "error" in query:
            raise await self._fail(provider_id, "provider_error", client)
        try:
            iss = query.get("iss")
            if iss is not None and iss != upstream.issuer:
                raise FederationFailed("iss_mismatch")
            if iss is None and await self._client.announces_iss(upstream):
                raise FederationFailed("iss_missing")
            code = query.get("code", "")
            if not code or len(code) > 2048:
                raise FederationFailed("code_missing")
            who = await self._client.redeem(
                upstream, code, flow.code_verifier, self.redirect_uri(provider_id), flow.nonce
            )
        except FederationFailed as exc:
            raise await self._fail(provider_id, exc.reason, client) from None
        if flow.link_user_id is not None:
            offer = await offer_link(self._storage, self._clock, flow, who, self._email(who))
            return CallbackResult(flow.return_to, link_offer=offer)
        if flow.invitation_hash is not None:
            started = await self._accept_invitation(provider, who, flow.invitation_hash, start)
            return CallbackResult(flow.return_to, started=started)
        try:
            started = await self._login_with(provider, who, client, start)
        except errors.MfaRequired as exc:
            return CallbackResult(flow.return_to, mfa_token=exc.mfa_token)
        except errors.AccountExists:
            raise ExistingAccount(self._email(who), flow.return_to) from None
        return CallbackResult(flow.return_to, started=started)

    async def native(
        self, provider_id: str, id_token: str, nonce: str | None, client: str,
        user_agent: str | None,
    ) -> TokenPair:  # fmt: skip
        """``POST /login/federated``: an ID token a native app got from the provider itself →
        a token pair of the JSON API. ``nonce`` is required and compared as given; the token's
        ``iat`` at most ``NATIVE_MAX_AGE`` seconds old; an (issuer, nonce) pair is accepted
        once until the token's ``exp`` (OpenID Connect Core §15.5.2). Raises like
        ``callback_with`` (``FederationFailed`` for a GitHub provider: no ID tokens, a missing
        nonce, a stale token, a replay)."""
        provider = self.provider(provider_id)
        if not nonce:
            raise await self._fail(provider_id, "nonce_missing", client)
        try:
            who = await self._client.verify_id_token(provider.upstream(), id_token, nonce)
        except FederationFailed as exc:
            raise await self._fail(provider_id, exc.reason, client) from None
        now = self._clock.now()
        refusal = native_id_token_refusal(who.issued_at, who.expires_at, now)
        if refusal is not None:
            raise await self._fail(provider_id, refusal, client)
        assert who.expires_at is not None  # native_id_token_refusal checked it
        async with self._storage.begin() as uow:  # (issuer, nonce) once, on every instance
            fresh = await uow.identities.spend_nonce(who.issuer, _sha256(nonce), who.expires_at,
                                                     now)  # fmt: skip
            await uow.commit()
        if not fresh:
            raise await self._fail(provider_id, "nonce_replayed", client)

        start = token_start(self._issuer, client, user_agent)
        return await self._login_with(provider, who, client, start)

    def _email(self, who: UpstreamIdentity) -> str | None:
        if who.email is None:
            return None
        try:
            return self._normalize_email(who.email)
        except errors.ValidationFailed:
            return None

    def _with_provider(self, provider: ProviderSettings, start: LoginStart[T]) -> LoginStart[T]:
        """``start`` whose ``LoginSucceeded`` names ``provider``."""

        async def start_here(uow: UnitOfWork, user: User, method: str) -> tuple[T, list[Event]]:
            started, opened = await start(uow, user, method)
            return started, [
                attrs.evolve(e, provider=provider.id) if isinstance(e, LoginSucceeded) else e
                for e in opened
            ]

        return start_here

    async def _accept_invitation(
        self, provider: ProviderSettings, who: UpstreamIdentity, token_hash: str,
        start: LoginStart[T],
    ) -> T:  # fmt: skip
        """Accept the invitation of ``token_hash`` as ``who``
        (``application.login.federated_invitation``)."""
        if self._invitations is None:
            raise errors.FederationFailed("signing in with this provider failed")
        start_here = self._with_provider(provider, start)
        return await accept_with_identity(self._invitations, provider.id, who, self._email(who),
                                          token_hash, start_here)  # fmt: skip

    async def _login_with(
        self, provider: ProviderSettings, who: UpstreamIdentity, client: str, start: LoginStart[T]
    ) -> T:
        """Find or make the account of ``who`` (the linking rules), then log it in."""
        now = self._clock.now()
        events: list[Event] = []
        start_here = self._with_provider(provider, start)
        async with self._storage.begin() as uow:
            known = await uow.identities.find(who.issuer, who.subject)
            email = self._email(who)
            if known is not None:
                user = await uow.users.get(known.user_id)
                if user is None:
                    raise errors.FederationFailed("signing in with this provider failed")
                await uow.identities.record_use(who.issuer, who.subject, email, now)
            else:
                user, events = await self._account(uow, provider, who, email)
            outcome = await finish_login(uow, user, start_here, METHOD, self._auth.current, now,
                                         second_step=FEDERATED_FIRST, also=events)  # fmt: skip
        return await outcome.conclude(self._storage, self._bus, client)

    async def _account(
        self, uow: UnitOfWork, provider: ProviderSettings, who: UpstreamIdentity,
        email: str | None,
    ) -> tuple[User, list[Event]]:  # fmt: skip
        """The account of an identity seen for the first time (``federated_account``), with
        the identity stored; raises ``AccountExists`` / ``FederationNotAllowed``."""
        now = self._clock.now()
        local = None if email is None else await uow.users.get_by_email(email)
        outcome = federated_account(
            email, who.email_verified, local, provider.trust_email, provider.create_users,
            email is not None and provider.allows_domain(email),
        )  # fmt: skip
        events: list[Event] = []
        if outcome is FederatedOutcome.LINK and local is not None:
            user, how = local, "trusted_email"
        else:
            org = provider.org_id or self._auth.current.default_org_id
            assert email is not None  # federated_account creates only with an email
            verified = new_user_email_verified(who.email_verified, provider.trust_email)
            user = User(id=new_id(), email=email, password_hash="", role=Role.VIEWER, org_id=org,
                        created_at=now, email_verified=verified)  # fmt: skip
            try:
                await uow.users.add(user)
            except errors.EmailTaken:  # registered meanwhile
                raise errors.AccountExists("an account with this email exists") from None
            events.append(UserRegistered(user.id, org))
            how = "created"
        identity = FederatedIdentity(who.issuer, who.subject, provider.id, user.id, email, now,
                                     now, email_was_verified=user.email_verified)  # fmt: skip
        try:
            await uow.identities.add(identity)
        except errors.Conflict:
            raise errors.AccountExists(
                "this account has another identity of this provider"
            ) from None
        events.append(IdentityLinked(user.id, provider.id, how))
        return user, events
