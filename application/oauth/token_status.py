"""What a client may learn of a token, and how it ends one: revocation (RFC 7009) and
introspection (RFC 7662) for the tokens of both grants, the client credentials grant's (RFC 6749
§4.4) and the code flow's (its access tokens carry ``sid``, the family, and ``sub``, the
user; its refresh tokens are stored hashed with their family).

A code-flow access token stands while ``domain.login.user_token_live`` says so: its family
lives (no logout, password change, disable, consent revoked, code reused, revocation), its user
is enabled and its ``jti`` was not revoked. ``/oauth/userinfo`` asks the same
(``live_user_of``). Errors are ``OAuthError`` (RFC 6749 §5.2), rendered by the HTTP driver.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import attrs

from application.events.audit import record
from application.events.catalog import Event, SessionEnded
from application.events.clients import AccessTokenRevoked
from application.oauth.code_client import CodeClientAuthenticator
from application.oauth.grants import CLIENT_TOKEN_TYPE, ClientAuthenticator
from application.ports import Clock, EventBus, Signer, Storage, UnitOfWork
from application.shared.settings import AuthSettings, Live
from application.shared.steps import hash_token, publish_all
from domain.clients import Client
from domain.errors import InvalidToken
from domain.login import user_token_live
from domain.model import SessionEndReason, User
from domain.oidc import OIDC_SCOPES

__all__ = ["Introspection", "Revocation", "is_user_token", "live_user_of"]


async def _client_token(signer: Signer, auth: AuthSettings, token: str) -> dict[str, Any] | None:
    """The claims of a valid, unexpired client access token of ours (any audience), or None."""
    try:
        claims = await signer.verify(
            token, issuer=auth.issuer, audience=None, leeway=auth.leeway, typ=CLIENT_TOKEN_TYPE
        )
    except InvalidToken:
        return None
    return claims if isinstance(claims.get("client_id"), str) else None


def is_user_token(claims: dict[str, Any]) -> bool:
    """Whether verified ``at+jwt`` claims are a user's access token of the code flow (a
    ``sid`` naming its family and a ``sub`` that is not the client), not a client credentials
    token (RFC 9068 §2.2: there ``sub`` is the client)."""
    sid, sub = claims.get("sid"), claims.get("sub")
    return isinstance(sid, str) and isinstance(sub, str) and sub != claims.get("client_id")


async def live_user_of(
    uow: UnitOfWork, claims: dict[str, Any], now: datetime
) -> tuple[User, list[str]] | None:
    """The user (and its groups' names) behind the code-flow access token ``claims`` (see
    ``is_user_token``) while it stands (``domain.login.user_token_live``: its family live
    and the client's, its user enabled, its ``jti`` not revoked); None otherwise."""
    family = await uow.sessions.get(str(claims["sid"]))
    found = await uow.users.get_with_groups(str(claims["sub"]))
    jti = claims.get("jti")
    revoked = not isinstance(jti, str) or await uow.clients.is_revoked(jti)
    user = None if found is None else found[0]
    live = user_token_live(claims.get("client_id"), str(claims["sub"]), family, user, revoked, now)
    return found if live else None


@attrs.frozen
class Revocation:
    """POST /oauth/revoke ``token`` (RFC 7009; docs/adr/0032-openid-connect-provider.md).

    The caller authenticates with its secret (``client_secret_basic`` or ``client_secret_post``
    through ``ClientAuthenticator``) or, a public client, with its ``client_id`` alone
    (``secret`` None: method ``none``, RFC 7009 §2.1, through ``CodeClientAuthenticator``);
    a failure is ``OAuthError("invalid_client")`` (401). Then:

    - a valid access token issued to the caller (either grant) is recorded as revoked until its
      ``exp`` (introspection answers inactive and userinfo 401 at once), with a
      ``token.revoked`` audit row;
    - a refresh token of a family the caller started (live, or rotated and remembered) ends
      that family, as ``DELETE /me/consents`` ends a client's (its refresh and access tokens
      fail from then on), with a ``session.ended`` row, reason ``revoked``, actor the client;
    - any other token (another client's, a user's of the JSON API, an unknown or expired one)
      changes nothing. Never an error for the token itself (RFC 7009 §2.2).
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock
    _signer: Signer
    _auth: Live[AuthSettings]
    _authenticator: ClientAuthenticator
    _public: CodeClientAuthenticator

    async def __call__(
        self, client_id: str, secret: str | None, token: str, *, client: Client | None = None
    ) -> None:
        """Revoke ``token`` if it is the calling client's (``client``: already authenticated,
        by ``private_key_jwt``)."""
        if client is None and secret is None:
            client = await self._public.authenticate(client_id, None, "none")
        elif client is None:
            client = await self._authenticator.authenticate(client_id, secret or "")
        claims = await _client_token(self._signer, self._auth.current, token)
        if claims is not None:
            await self._revoke_access(client, claims)
        elif len(token) <= 4096:
            await self._revoke_family(client, token)

    async def _revoke_access(self, client: Client, claims: dict[str, Any]) -> None:
        if claims["client_id"] != client.id or not isinstance(claims.get("jti"), str):
            return
        now = self._clock.now()
        revoked = AccessTokenRevoked(client.id, client.org_id, claims["jti"])
        expires = datetime.fromtimestamp(int(claims["exp"]), tz=UTC)
        async with self._storage.begin() as uow:
            await uow.clients.revoke(claims["jti"], client.id, expires)
            await record(uow, [revoked], now)
            await uow.commit()
        await self._bus.publish(revoked)

    async def _revoke_family(self, client: Client, token: str) -> None:
        token_hash = hash_token(token)
        async with self._storage.begin() as uow:
            found = await uow.tokens.find(token_hash) or await uow.tokens.find_rotated(token_hash)
            if found is None:
                return
            family = await uow.sessions.get(found.family_id)
            if family is None or family.client_id != client.id:
                return
            await uow.sessions.end(found.family_id)
            events: list[Event] = [
                SessionEnded(found.user_id, found.family_id, SessionEndReason.REVOKED, client.id)
            ]
            await record(uow, events, self._clock.now())
            await uow.commit()
        await publish_all(self._bus, events)


@attrs.frozen
class Introspection:
    """POST /oauth/introspect ``token`` (RFC 7662; docs/adr/0032-openid-connect-provider.md). After
    ``ClientAuthenticator``: ``{"active": true, "scope", "client_id", "sub", "exp", "iat",
    "iss", "aud", "token_type", "org_id"}`` (and ``cnf`` for a DPoP-bound token) for a valid,
    unexpired, unrevoked access token whose client still exists, is enabled and belongs to the
    caller's organization; ``{"active": false}`` for anything else (the JSON API's tokens and
    refresh tokens included).

    A client credentials token's ``org_id`` is its client's organization. A code-flow token
    (``is_user_token``) is active only while it stands (``live_user_of``: its family live,
    its user enabled and not deleted), and its ``org_id`` and ``sub`` are its own claims (the
    user's), never the client's.

    No leeway past ``exp``: a token is inactive from its ``exp`` on (RFC 7519 §4.1.4 "on or
    after"), by this service's clock, whatever ``auth.leeway`` says (the leeway still covers
    an ``iat`` a little ahead, from another instance's clock). ``scope`` is the token's scopes
    that the client still holds now, in the token's order (space-separated; ``""`` when none
    is left), the OpenID Connect scopes of a code-flow token always kept: reducing a client's
    scopes narrows its live tokens at once."""

    _storage: Storage
    _signer: Signer
    _auth: Live[AuthSettings]
    _authenticator: ClientAuthenticator
    _clock: Clock

    async def __call__(
        self, client_id: str, secret: str, token: str, *, client: Client | None = None
    ) -> dict[str, Any]:
        """What the caller may know of ``token`` (``client``: the caller already
        authenticated, by ``private_key_jwt``)."""
        caller = client or await self._authenticator.authenticate(client_id, secret)
        claims = await _client_token(self._signer, self._auth.current, token)
        now = self._clock.now()
        if claims is None or int(claims["exp"]) <= now.timestamp():
            return {"active": False}
        user_token = is_user_token(claims)
        async with self._storage.read() as uow:
            owner = await uow.clients.get(claims["client_id"])
            revoked = await uow.clients.is_revoked(claims["jti"])
            standing = not user_token or await live_user_of(uow, claims, now) is not None
        if owner is None or owner.disabled or owner.org_id != caller.org_id or revoked:
            return {"active": False}
        if not standing:
            return {"active": False}
        keys = ("scope", "client_id", "sub", "exp", "iat", "iss", "aud")
        answer: dict[str, Any] = {k: claims[k] for k in keys if k in claims}
        held = set(owner.scopes) | (set(OIDC_SCOPES) if user_token else set())
        answer["scope"] = " ".join(s for s in str(claims.get("scope", "")).split(" ") if s in held)
        kind = "Bearer"
        if isinstance(claims.get("cnf"), dict):
            answer["cnf"], kind = claims["cnf"], "DPoP"
        org_id = claims.get("org_id") if user_token else owner.org_id
        return {"active": True, **answer, "token_type": kind, "org_id": org_id}
