"""The device authorization grant, the device's side (RFC 8628 §3.1–3.5;
docs/reference/oauth-and-oidc.md): ``POST /oauth/device_authorization`` starts a request, the
token endpoint's ``urn:ietf:params:oauth:grant-type:device_code`` polls it. The user's side
(``/ui/device``) is ``application.oauth.device_verification``.

The client authenticates as at the token endpoint (the HTTP driver hands over the ``Client``);
it must hold the device code grant. The device code (256 bits) and the user code are stored only
as SHA-256 hashes (``domain.device``). The tokens are issued once: the poll that finds the grant
approved takes it (``DeviceGrantStore.take``, one conditional update) in the unit of work that
starts the token family.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from urllib.parse import quote

import attrs

from application.oauth.code_exchange import CodeFlowGrants, CodeFlowTokens
from application.oauth.grants import OAuthError
from application.oauth.settings import OidcSettings
from application.ports import Clock, Storage
from application.shared.settings import AuthSettings, Live
from application.shared.steps import hash_token
from domain.clients import Client
from domain.device import (
    DEVICE_CODE_GRANT,
    INTERVAL,
    DeviceGrant,
    PollOutcome,
    format_user_code,
    new_user_code,
    poll_outcome,
)
from domain.errors import Conflict
from domain.login import code_login_live, still_active
from domain.oidc import IGNORED_SCOPES, OIDC_SCOPES

__all__ = ["DEVICE_PATH", "DeviceAuthorizationResponse", "DeviceFlow", "device_scopes"]

DEVICE_CODE_BYTES = 32
"""Entropy of a device code: 256 bits, base64url (43 characters)."""
DEVICE_PATH = "/ui/device"
"""The verification page under ``auth.issuer`` (``verification_uri``)."""
_MAX_DEVICE_CODE = 128
_ATTEMPTS = 4
_DESCRIPTIONS = {
    PollOutcome.PENDING: "the user has not decided yet",
    PollOutcome.SLOW_DOWN: "polling too fast: wait the interval, now 5 seconds longer",
    PollOutcome.DENIED: "the user denied the request",
    PollOutcome.EXPIRED: "the device code has expired; start again",
    PollOutcome.USED: "the device code was used already",
}


@attrs.frozen
class DeviceAuthorizationResponse:
    """RFC 8628 §3.2: ``device_code`` (clear, shown once), ``user_code`` (``XXXX-XXXX``),
    ``verification_uri`` (``{issuer}/ui/device``), ``verification_uri_complete`` (with the user
    code), ``expires_in`` and ``interval`` (seconds)."""

    device_code: str = attrs.field(repr=False)
    user_code: str = attrs.field(repr=False)
    verification_uri: str
    verification_uri_complete: str = attrs.field(repr=False)
    expires_in: int
    interval: int


def device_scopes(client: Client, scope: str | None) -> tuple[str, ...]:
    """The scopes a device request asks for, checked like the authorization request's
    (docs/reference/oauth-and-oidc.md): the OIDC scopes and the client's own; ``address`` and
    ``phone`` are dropped. Raises ``OAuthError``: ``invalid_request`` for an empty value in the
    list, ``invalid_scope`` for a scope the client may not ask for."""
    if scope is None:
        return ()
    asked = scope.split(" ")
    if "" in asked and scope != "":
        raise OAuthError("invalid_request", "scope holds an empty value")
    wanted = tuple(dict.fromkeys(s for s in asked if s and s not in IGNORED_SCOPES))
    if not set(wanted) <= set(OIDC_SCOPES) | set(client.scopes):
        raise OAuthError("invalid_scope", "the scope is not one this client may ask for")
    return wanted


@attrs.frozen
class DeviceFlow:
    """``await flow.start(client, scope)`` → ``DeviceAuthorizationResponse``;
    ``await flow.poll(client, device_code, jkt)`` → ``CodeFlowTokens``. Both raise
    ``OAuthError`` (``unauthorized_client`` for a client without the device code grant, and
    the errors each names)."""

    _storage: Storage
    _clock: Clock
    _auth: Live[AuthSettings]
    _oidc: Live[OidcSettings]
    _grants: CodeFlowGrants

    async def start(self, client: Client, scope: str | None) -> DeviceAuthorizationResponse:
        """A new device authorization request of ``client`` for ``scope`` (space-separated,
        ``device_scopes``), pending for ``oidc.device_code_ttl`` seconds."""
        _require_grant(client)
        scopes = device_scopes(client, scope)
        now = self._clock.now()
        ttl = self._oidc.current.device_code_ttl
        for attempt in range(_ATTEMPTS):
            device_code = secrets.token_urlsafe(DEVICE_CODE_BYTES)
            user_code = new_user_code()
            grant = DeviceGrant(
                hash_token(device_code), hash_token(user_code), client.id, scopes, now,
                now + timedelta(seconds=ttl), INTERVAL,
            )  # fmt: skip
            try:
                async with self._storage.begin() as uow:
                    await uow.device_grants.add(grant)
                    await uow.commit()
                break
            except Conflict:  # a user code drawn twice (about 1 in 2.5e10 per live request)
                if attempt == _ATTEMPTS - 1:
                    raise
        shown = format_user_code(user_code)
        page = self._auth.current.issuer.rstrip("/") + DEVICE_PATH
        return DeviceAuthorizationResponse(
            device_code, shown, page, f"{page}?user_code={quote(shown)}", ttl, INTERVAL
        )

    async def poll(
        self,
        client: Client,
        device_code: str,
        jkt: str | None,
        user_agent: str | None = None,
        client_address: str | None = None,
    ) -> CodeFlowTokens:
        """One poll (RFC 8628 §3.4–3.5) of ``client``'s ``device_code``: an unknown code or
        another client's → ``invalid_grant`` and nothing changes; otherwise the poll is
        recorded and answered by ``domain.device.poll_outcome`` (``authorization_pending``,
        ``slow_down``, ``access_denied``, ``expired_token``, ``invalid_grant`` once used).
        Approved: the grant is taken and the section 15 token response returned, once; if the
        approving login ended meanwhile (logout, password change, disable, delete) or the
        user may no longer sign in → ``invalid_grant`` (the grant is spent)."""
        _require_grant(client)
        now = self._clock.now()
        code_hash = hash_token(device_code[:_MAX_DEVICE_CODE])
        async with self._storage.begin() as uow:
            grant = await uow.device_grants.get(code_hash)
            if grant is None or grant.client_id != client.id:  # no commit: nothing changes
                raise OAuthError("invalid_grant", "the device code is unknown")
            outcome, interval = poll_outcome(grant, now)
            await uow.device_grants.record_poll(code_hash, now, interval)
            if outcome is not PollOutcome.ISSUE or not await uow.device_grants.take(code_hash):
                await uow.commit()
                issue = outcome if outcome is not PollOutcome.ISSUE else PollOutcome.USED
                raise OAuthError(issue.value, _DESCRIPTIONS[issue])
            user = None if grant.user_id is None else await uow.users.get(grant.user_id)
            login = None if grant.session_id is None else await uow.sessions.get(grant.session_id)
            if user is None or not still_active(user) or not code_login_live(user.id, login, now):
                await uow.commit()  # spent: the approval does not outlive its login
                raise OAuthError("invalid_grant", "the login that approved this device ended")
            tokens = await self._grants.device_tokens(
                uow, client, user, grant, jkt, now, user_agent, client_address
            )
            await uow.commit()
        return tokens


def _require_grant(client: Client) -> None:
    if DEVICE_CODE_GRANT not in client.grant_types:
        raise OAuthError("unauthorized_client", "this client may not use the device code grant")
