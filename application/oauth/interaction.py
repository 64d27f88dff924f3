"""``/oauth/authorize`` and the consent page's decision (OpenID Connect Core 1.0 §3.1.2;
docs/reference/oauth-and-oidc.md): after ``parse_authorize``, decide between a code, the login page,
the consent page and an error, from the browser's hosted session.

Interaction state travels in the URL (ADR 0032): the login page gets ``return_to`` =
``/oauth/authorize?<the same parameters>`` and sends the browser back there, where every check
runs again. A forced login (``prompt=login``, ``max_age`` exceeded) adds
``authsvc_login_after=<unix s>.<MAC>`` so that the fresh login satisfies the request instead of
asking again; the MAC (``SecretSealer.mac``) binds it to that authorization request (its client
and every other parameter) and makes it unforgeable: a marker fetched for one request does not
turn the forced login of another into a no-op.
The consent page posts its decision here (``decide``), which issues the code itself, so
``prompt=consent`` does not loop either.
"""

from __future__ import annotations

import base64
import hmac
import re
import secrets
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import attrs

from application.events.audit import record
from application.events.oidc import AuthorizationDenied, Authorized, ConsentDecided
from application.oauth.authorize import (
    AuthorizeRedirectError,
    AuthorizeRequest,
    parse_authorize,
    with_query,
)
from application.oauth.id_tokens import verify_id_token_hint
from application.oauth.pushed import resolve_pushed
from application.oauth.settings import OidcSettings
from application.ports import Clock, EventBus, SecretSealer, Signer, Storage, UnitOfWork
from application.sessions.hosted import move_idle_end, signed_in
from application.shared.settings import AuthSettings, Live
from application.shared.steps import hash_token
from domain import policy
from domain.clients import Client
from domain.model import User
from domain.oidc import AuthorizationCode, Consent, HostedSession

__all__ = [
    "AUTHORIZE_PATH",
    "LOGIN_AFTER",
    "Authorize",
    "ConsentNeeded",
    "LoginNeeded",
    "Redirect",
]

AUTHORIZE_PATH = "/oauth/authorize"
LOGIN_AFTER = "authsvc_login_after"
"""The parameter a forced login adds to ``return_to`` (see the module)."""
CODE_BYTES = 32
"""Entropy of an authorization code: 256 bits, base64url (43 characters)."""
_CLIENT_ID = re.compile(r"[0-9a-f]{32}")


@attrs.frozen
class Redirect:
    """Send the user agent to ``location`` (303)."""

    location: str


@attrs.frozen
class LoginNeeded:
    """Show the login page; after it, go to ``return_to`` (a path of this service).
    ``login_hint``: pre-fills the email."""

    return_to: str
    login_hint: str | None


@attrs.frozen
class ConsentNeeded:
    """Show the consent page for ``request`` to the user ``user_id`` (``return_to`` posts back
    with the decision); ``email``: who is signed in, shown on the page; ``not_you``: the
    request again with ``prompt=login`` (a path of this service), for "not you?"."""

    request: AuthorizeRequest
    user_id: str
    return_to: str
    email: str = ""
    not_you: str = ""


Outcome = Redirect | LoginNeeded | ConsentNeeded


@attrs.frozen
class Authorize:
    """``await authorize(pairs, cookie)`` → ``Outcome``; ``await authorize.decide(pairs, cookie,
    allow)`` → ``Redirect`` (or ``LoginNeeded`` when the session ended meanwhile). Raises
    ``AuthorizePageError`` for a request that cannot be answered by a redirect."""

    _storage: Storage
    _signer: Signer
    _sealer: SecretSealer
    _bus: EventBus
    _clock: Clock
    _auth: Live[AuthSettings]
    _oidc: Live[OidcSettings]

    async def __call__(self, pairs: list[tuple[str, str]], cookie: str | None) -> Outcome:
        """The next step of the authorization request ``pairs`` for the browser holding the
        hosted-session ``cookie`` (None: none)."""
        try:
            request = await self._parse(pairs)
            return await self._decide_step(request, list(request.params), cookie)
        except AuthorizeRedirectError as e:
            return self._error(e)

    async def decide(
        self, pairs: list[tuple[str, str]], cookie: str | None, allow: bool
    ) -> Outcome:
        """The consent page's decision on the request ``pairs``: after the same checks again,
        ``allow`` stores the consent (``oauth.consent_granted``) and issues the code; a refusal
        answers ``access_denied`` (``oauth.consent_denied``)."""
        try:
            request = await self._parse(pairs)
            pairs = list(request.params)
            signed = await self._hosted(cookie)
            if signed is None or await self._login_needed(request, signed[0], pairs) is not None:
                return await self._login(request, pairs, None)
            hosted, user = signed
            await self._check_organization(request, user)
            now = self._clock.now()
            scope = " ".join(request.scopes)
            decided = ConsentDecided(hosted.user_id, request.client.id, scope, allow)
            if not allow:
                async with self._storage.begin() as uow:
                    await record(uow, [decided], now)
                    await uow.commit()
                await self._bus.publish(decided)
                raise AuthorizeRedirectError(
                    "access_denied", "the user refused", request.redirect_uri, request.state
                )
            consent = Consent(hosted.user_id, request.client.id, request.scopes, now)
            return await self._issue(request, hosted, now, consent, decided)
        except AuthorizeRedirectError as e:
            return self._error(e)

    async def client(self, client_id: str) -> Client | None:
        """The enabled client ``client_id``, or None."""
        if not _CLIENT_ID.fullmatch(client_id):
            return None
        async with self._storage.read() as uow:
            client = await uow.clients.get(client_id)
        return None if client is None or client.disabled else client

    async def _parse(self, pairs: list[tuple[str, str]]) -> AuthorizeRequest:
        """The checked request: a pushed one's stored parameters for a ``request_uri``
        (RFC 9126 §4, ``resolve_pushed``); a client with
        ``require_pushed_authorization_requests`` refused (``invalid_request``) unless the
        request was pushed."""
        pairs, pushed = await resolve_pushed(
            self._storage, self._sealer, self._clock.now(), self._oidc.current.interaction_ttl,
            pairs,
        )  # fmt: skip
        client_id = next((v for k, v in pairs if k == "client_id"), "")
        request = parse_authorize(pairs, await self.client(client_id))
        if request.client.require_pushed_authorization_requests and not pushed:
            raise AuthorizeRedirectError(
                "invalid_request", "this client must push its authorization requests (RFC 9126)",
                request.redirect_uri, request.state,
            )  # fmt: skip
        if request.id_token_hint is not None:
            claims = await verify_id_token_hint(
                self._signer, self._auth.current, request.id_token_hint
            )
            if claims is None:
                raise AuthorizeRedirectError(
                    "invalid_request", "id_token_hint is not an ID token of ours",
                    request.redirect_uri, request.state,
                )  # fmt: skip
        return request

    def _error(self, error: AuthorizeRedirectError) -> Redirect:
        params = [("error", error.error), ("error_description", error.description)]
        if error.state is not None:
            params.append(("state", error.state))
        params.append(("iss", self._auth.current.issuer))
        return Redirect(with_query(error.redirect_uri, params))

    async def _hosted(self, cookie: str | None) -> tuple[HostedSession, User] | None:
        """The live hosted session of ``cookie`` and its (enabled) user, or None."""
        return await signed_in(self._storage, cookie, self._clock.now())

    async def _check_organization(self, request: AuthorizeRequest, user: User) -> None:
        """A client signs in only users it admits (``policy.client_admits_user``); anyone else
        → ``access_denied`` at the redirect URI, recorded as ``oauth.denied``."""
        if policy.client_admits_user(request.client, user):
            return
        denied = AuthorizationDenied(user.id, request.client.id, "organization")
        async with self._storage.begin() as uow:
            await record(uow, [denied], self._clock.now())
            await uow.commit()
        await self._bus.publish(denied)
        raise AuthorizeRedirectError(
            "access_denied", "this application does not sign in users of your organization",
            request.redirect_uri, request.state,
        )  # fmt: skip

    def _login_marker(self, request: AuthorizeRequest, at: int) -> str:
        """``<at>.<MAC>``: the MAC binds ``at`` to this very request (every parameter but the
        marker, so its ``state``, ``nonce`` and PKCE challenge), not to the client alone."""
        asked = sorted((k, v) for k, v in request.params if k != LOGIN_AFTER)
        digest = hash_token(urlencode(asked))
        mac = self._sealer.mac(f"authsvc login after {at} {request.client.id} {digest}".encode())
        return f"{at}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode('ascii')}"

    def _login_after(self, request: AuthorizeRequest, pairs: list[tuple[str, str]]) -> int | None:
        """The time of a forced login this request already asked for (a valid marker)."""
        marker = dict(pairs).get(LOGIN_AFTER, "")
        at, _, _ = marker.partition(".")
        if not (at.isascii() and at.isdigit() and len(at) < 12):
            return None
        expected = self._login_marker(request, int(at))
        now = self._clock.now().timestamp()
        fresh = now - int(at) <= self._oidc.current.interaction_ttl
        return int(at) if fresh and hmac.compare_digest(marker, expected) else None

    async def _login_needed(
        self, request: AuthorizeRequest, hosted: HostedSession, pairs: list[tuple[str, str]]
    ) -> str | None:
        """Why ``hosted`` does not do for ``request``: ``"forced"`` (a fresh login is needed),
        ``"other_user"`` (the hint names another user), or None."""
        if request.id_token_hint is not None:
            claims = await verify_id_token_hint(
                self._signer, self._auth.current, request.id_token_hint
            )
            if claims is None or claims.get("sub") != hosted.user_id:
                return "other_user"
        age = (self._clock.now() - hosted.auth_time).total_seconds()
        stale = request.max_age is not None and age > request.max_age
        if "login" in request.prompt or stale:
            after = self._login_after(request, pairs)
            if after is None or hosted.auth_time.timestamp() < after:
                return "forced"
        return None

    async def _login(
        self, request: AuthorizeRequest, pairs: list[tuple[str, str]], why: str | None
    ) -> Outcome:
        if "none" in request.prompt:
            raise AuthorizeRedirectError(
                "login_required", "the user must sign in", request.redirect_uri, request.state
            )
        extra: dict[str, str] = {}
        if why == "forced" or "login" in request.prompt or request.max_age is not None:
            now = int(self._clock.now().timestamp())
            extra[LOGIN_AFTER] = self._login_marker(request, now)
        return LoginNeeded(AUTHORIZE_PATH + "?" + request.query(**extra), request.login_hint)

    async def _decide_step(
        self, request: AuthorizeRequest, pairs: list[tuple[str, str]], cookie: str | None
    ) -> Outcome:
        signed = await self._hosted(cookie)
        if signed is None:
            return await self._login(request, pairs, None)
        hosted, user = signed
        why = await self._login_needed(request, hosted, pairs)
        if why is not None:
            return await self._login(request, pairs, why)
        await self._check_organization(request, user)
        if await self._consent_needed(request, user):
            if "none" in request.prompt:
                raise AuthorizeRedirectError(
                    "consent_required", "the user must consent", request.redirect_uri,
                    request.state,
                )  # fmt: skip
            return ConsentNeeded(
                request, user.id, AUTHORIZE_PATH + "?" + request.query(), user.email,
                _not_you(request),
            )  # fmt: skip
        return await self._issue(request, hosted, self._clock.now(), None, None)

    async def _consent_needed(self, request: AuthorizeRequest, user: User) -> bool:
        """Whether to ask: ``prompt=consent`` always; a ``skip_consent`` client not for users
        of its organization (``policy.consent_skippable``); a request within the stored grant
        not (OpenID Connect Core 1.0 §3.1.2.4)."""
        if "consent" in request.prompt:
            return True
        if policy.consent_skippable(request.client, user):
            return False
        async with self._storage.read() as uow:
            stored = await uow.consents.get(user.id, request.client.id)
        return stored is None or not set(request.scopes) <= set(stored.scopes)

    async def _issue(
        self,
        request: AuthorizeRequest,
        hosted: HostedSession,
        now: datetime,
        consent: Consent | None,
        decided: ConsentDecided | None,
    ) -> Redirect:
        """Store a new code (hashed, ``oidc.code_ttl`` s) and the consent, if any; record
        ``oauth.authorized``; redirect with ``code``, ``state`` and ``iss``."""
        clear = secrets.token_urlsafe(CODE_BYTES)
        code = AuthorizationCode(
            code_hash=hash_token(clear),
            client_id=request.client.id,
            user_id=hosted.user_id,
            redirect_uri=request.redirect_uri,
            code_challenge=request.code_challenge,
            nonce=request.nonce,
            scopes=request.scopes,
            session_id=hosted.session_id,
            auth_time=hosted.auth_time,
            amr=hosted.amr,
            acr=hosted.acr,
            created_at=now,
            expires_at=now + timedelta(seconds=self._oidc.current.code_ttl),
        )
        events: list[Any] = [] if decided is None else [decided]
        events.append(
            Authorized(
                hosted.user_id, request.client.id, " ".join(request.scopes), hosted.session_id
            )
        )
        async with self._storage.begin() as uow:
            await uow.codes.add(code)
            if consent is not None:
                await uow.consents.grant(consent)
            await self._touch(uow, hosted, now)
            await record(uow, events, now)
            await uow.commit()
        for event in events:
            await self._bus.publish(event)
        params = [("code", clear)]
        if request.state is not None:
            params.append(("state", request.state))
        params.append(("iss", self._auth.current.issuer))
        return Redirect(with_query(request.redirect_uri, params))

    async def _touch(self, uow: UnitOfWork, hosted: HostedSession, now: datetime) -> None:
        await move_idle_end(uow, hosted, now, self._oidc.current.session_idle_ttl)


def _not_you(request: AuthorizeRequest) -> str:
    """The request again with ``prompt=login`` added (OpenID Connect Core 1.0 §3.1.2.1): a new
    login, then this request for whoever signs in. Any earlier forced-login marker and the
    ``login_hint`` are dropped, so the current session cannot satisfy it."""
    prompt = " ".join(sorted(request.prompt | {"login"}))
    kept = [(k, v) for k, v in request.params if k not in (LOGIN_AFTER, "login_hint", "prompt")]
    return AUTHORIZE_PATH + "?" + urlencode([*kept, ("prompt", prompt)])
