"""The token endpoint's code-flow grants (OpenID Connect Core 1.0 §3.1.3; OAuth 2.1 §4.1.3,
§4.3; docs/reference/oauth-and-oidc.md): ``authorization_code`` and ``refresh_token`` for an OAuth
client.

Each code exchange starts a token family: a ``sessions`` row with the client's id (shown in the
user's sessions list). Its access tokens are RFC 9068 JWTs (``typ: at+jwt``; ``sub`` the user,
``client_id``, ``scope``, ``sid`` = the family id, bound to a DPoP key with ``cnf.jkt``), which
the JSON API does not take and ``/oauth/userinfo`` does while the family lives. A refresh token
is issued with ``offline_access`` granted and the client's ``refresh_token`` grant; it rotates
like a login's (``SessionRotation``), bound to the client and carrying after a ``.`` what the
refreshed ID token keeps (``auth_time``, ``amr``, ``acr``, ``sid``, and a DPoP key's thumbprint
for a public client that sent a proof, RFC 9449 §5): the stored hash covers the whole token, so
a changed suffix is an unknown token.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime, timedelta
from typing import Any

import attrs

from application.events.audit import record
from application.events.oidc import CodeReused
from application.oauth.grants import CLIENT_TOKEN_TYPE, OAuthError
from application.oauth.id_tokens import (
    ID_TOKEN_TYPE,
    authsvc_claims,
    id_token_alg,
    id_token_claims,
)
from application.oauth.settings import OidcSettings
from application.ports import Clock, EventBus, Signer, Storage, UnitOfWork, UserRepo
from application.sessions.tokens import AccessMinter, SessionRotation, TokenIssuer
from application.shared.backchannel import queue_logout_notices
from application.shared.settings import AuthSettings, Live
from application.shared.steps import hash_token, new_id
from domain.clients import Client
from domain.device import DeviceGrant
from domain.errors import InvalidRefreshToken
from domain.login import code_login_live, still_active
from domain.model import USER_AGENT_MAX_LENGTH, Session, User
from domain.oidc import pkce_s256_matches

__all__ = ["CodeFlowGrants", "CodeFlowTokens"]


@attrs.frozen
class CodeFlowTokens:
    """The token response (RFC 6749 §5.1; OIDC Core §3.1.3.3)."""

    access_token: str = attrs.field(repr=False)
    token_type: str
    expires_in: int
    scope: str
    id_token: str | None = attrs.field(default=None, repr=False)
    refresh_token: str | None = attrs.field(default=None, repr=False)


@attrs.frozen
class _Login:
    """What a family keeps of the login it came from (the refresh token's suffix)."""

    auth_time: int
    amr: tuple[str, ...]
    acr: str
    sid: str
    scopes: tuple[str, ...]
    jkt: str | None = None

    def encode(self) -> str:
        data = {"t": self.auth_time, "m": list(self.amr), "a": self.acr, "s": self.sid,
                "p": list(self.scopes), "k": self.jkt}  # fmt: skip
        raw = json.dumps(data, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")

    @classmethod
    def decode(cls, token: str) -> _Login | None:
        suffix = token.partition(".")[2]
        try:
            data = json.loads(base64.urlsafe_b64decode(suffix + "=" * (-len(suffix) % 4)))
            jkt = data["k"] if isinstance(data["k"], str) else None
            return cls(int(data["t"]), tuple(data["m"]), str(data["a"]), str(data["s"]),
                       tuple(data["p"]), jkt)  # fmt: skip
        except (ValueError, KeyError, TypeError, binascii.Error):
            return None


def _invalid_grant(description: str) -> OAuthError:
    return OAuthError("invalid_grant", description)


@attrs.frozen
class CodeFlowGrants:
    """``await grants.authorization_code(client, code, redirect_uri, verifier, jkt)`` and
    ``await grants.refresh(client, refresh_token, scope, jkt)`` → ``CodeFlowTokens``; both
    raise ``OAuthError`` (``invalid_grant``, ``invalid_scope``, ``unauthorized_client``)."""

    _storage: Storage
    _signer: Signer
    _bus: EventBus
    _clock: Clock
    _auth: Live[AuthSettings]
    _oidc: Live[OidcSettings]
    _issuer: TokenIssuer
    _rotation: SessionRotation

    async def authorization_code(
        self,
        client: Client,
        code: str,
        redirect_uri: str | None,
        verifier: str | None,
        jkt: str | None,
        user_agent: str | None = None,
        client_address: str | None = None,
    ) -> CodeFlowTokens:
        """Exchange ``code`` (OAuth 2.1 §4.1.3): it must be the client's, unexpired, for this
        ``redirect_uri``, and ``verifier`` must match its PKCE challenge — else
        ``invalid_grant`` and nothing changes. So is a code whose login ended meanwhile (the
        hosted session's ``sessions`` row gone: logout, password change, disable, delete, a
        newer login in that browser; ``domain.login.code_login_live``) or whose user is
        disabled. A second use of a code that passes those checks is ``invalid_grant`` and
        ends the family its first use started (``oauth.code_reused``, RFC 9700 §4.2.4)."""
        if "authorization_code" not in client.grant_types:
            raise OAuthError("unauthorized_client", "this client may not use this grant")
        now = self._clock.now()
        code_hash = hash_token(code)
        async with self._storage.begin() as uow:
            taken = await uow.codes.take(code_hash, now)
            if (
                taken is None
                or taken.code.client_id != client.id
                or taken.code.expires_at <= now
                or redirect_uri != taken.code.redirect_uri
                or verifier is None
                or not pkce_s256_matches(taken.code.code_challenge, verifier)
            ):  # no commit: the take is undone, nothing is revoked
                raise _invalid_grant("the code is unknown, expired, used or not for this request")
            found = taken.code
            if not taken.first_use:
                reused = CodeReused(found.user_id, client.id, found.family_id)
                if found.family_id is not None:
                    await queue_logout_notices(uow, found.user_id, now, [found.family_id])
                    await uow.sessions.end(found.family_id)
                await record(uow, [reused], now)
                await uow.commit()
                reused_event: CodeReused | None = reused
            else:
                reused_event = None
                user = await uow.users.get(found.user_id)
                login_row = await uow.sessions.get(found.session_id)
                if not still_active(user) or not code_login_live(
                    found.user_id, login_row, now
                ):  # no commit: the take is undone
                    raise _invalid_grant("the login this code came from has ended")
                login = _Login(
                    int(found.auth_time.timestamp()), found.amr, found.acr, found.session_id,
                    found.scopes, jkt if client.public else None,
                )  # fmt: skip
                tokens, family_id = await self._start_family(
                    uow, client, user, found.nonce, login, jkt, now, user_agent, client_address
                )
                await uow.codes.set_family(found.code_hash, family_id)
                await uow.commit()
        if reused_event is not None:
            await self._bus.publish(reused_event)
            raise _invalid_grant("the code was used already")
        return tokens

    async def _start_family(
        self,
        uow: UnitOfWork,
        client: Client,
        user: User,
        nonce: str | None,
        login: _Login,
        jkt: str | None,
        now: datetime,
        user_agent: str | None,
        client_address: str | None,
    ) -> tuple[CodeFlowTokens, str]:
        """A new token family (a ``sessions`` row with the client's id) for ``login``: the
        tokens and the family's id."""
        cfg = self._auth.current
        family_id = new_id()
        expires_at = now + timedelta(seconds=cfg.session_max_age)
        await uow.sessions.add(
            Session(
                id=family_id, user_id=user.id, created_at=now, last_used_at=now,
                expires_at=expires_at,
                user_agent=None if user_agent is None else user_agent[:USER_AGENT_MAX_LENGTH],
                client_address=client_address, client_id=client.id, sid=login.sid,
            )
        )  # fmt: skip
        minter = self._minter(client, login.scopes, jkt)
        refresh = None
        if "offline_access" in login.scopes and "refresh_token" in client.grant_types:
            pair, _ = await self._issuer.issue_pair(
                uow, user, "login", family_id=family_id, session_expires_at=expires_at,
                access=minter, suffix=login.encode(),
            )  # fmt: skip
            access, expires_in, refresh = pair.access_token, pair.expires_in, pair.refresh_token
        else:
            access, _, expires_in = await minter(user, [], now, family_id)
        id_token = await self._id_token(client, user.id, login, nonce, now, login.scopes, uow.users)
        return CodeFlowTokens(
            access, "DPoP" if jkt else "Bearer", expires_in, " ".join(login.scopes),
            id_token, refresh,
        ), family_id  # fmt: skip

    async def device_tokens(
        self,
        uow: UnitOfWork,
        client: Client,
        user: User,
        grant: DeviceGrant,
        jkt: str | None,
        now: datetime,
        user_agent: str | None = None,
        client_address: str | None = None,
    ) -> CodeFlowTokens:
        """The token response of an approved device ``grant`` (RFC 8628 §3.5), in the caller's
        unit of work ``uow`` (which took the grant): a new token family exactly as a code
        exchange starts one (the ID token with ``openid``, without ``nonce``; a refresh token
        with ``offline_access`` and the client's ``refresh_token`` grant; bound to ``jkt``)."""
        if grant.auth_time is None or grant.session_id is None or grant.acr is None:
            raise _invalid_grant("the device authorization was not approved")
        login = _Login(
            int(grant.auth_time.timestamp()), grant.amr, grant.acr, grant.session_id,
            grant.scopes, jkt if client.public else None,
        )  # fmt: skip
        tokens, _ = await self._start_family(
            uow, client, user, None, login, jkt, now, user_agent, client_address
        )
        return tokens

    async def refresh(
        self, client: Client, refresh_token: str, scope: str | None, jkt: str | None
    ) -> CodeFlowTokens:
        """Rotate a refresh token of ``client``'s family (docs/reference/tokens-and-sessions.md's
        rotation, reuse detection and reuse interval): another client's token is ``invalid_grant``
        and changes nothing; a public client's token bound to a DPoP key needs a proof of that key.
        ``scope`` (optional) must be within the granted scopes (``invalid_scope``). The refreshed ID
        token keeps ``iss``, ``sub``, ``aud``, ``azp``, ``auth_time``."""
        if "refresh_token" not in client.grant_types:
            raise OAuthError("unauthorized_client", "this client may not use this grant")
        login = _Login.decode(refresh_token)
        if login is None:
            raise _invalid_grant("the refresh token is unknown, expired or revoked")
        scopes = login.scopes
        if scope is not None:
            asked = tuple(dict.fromkeys(scope.split(" ")))
            if not scope or not set(asked) <= set(login.scopes):
                raise OAuthError("invalid_scope", "the scope exceeds the granted scopes")
            scopes = asked
        if login.jkt is not None and jkt != login.jkt:
            raise _invalid_grant("the refresh token is bound to another DPoP key")
        bound_jkt = jkt if (jkt is not None or login.jkt is not None) else None
        try:
            pair = await self._rotation.rotate(
                refresh_token, client_id=client.id, access=self._minter(client, scopes, bound_jkt)
            )
        except InvalidRefreshToken as e:
            raise _invalid_grant(str(e)) from None
        id_token = None
        if "openid" in scopes:
            user_id = await self._subject(pair.access_token)
            id_token = await self._id_token(
                client, user_id, login, None, self._clock.now(), scopes, None
            )
        return CodeFlowTokens(
            pair.access_token, "DPoP" if bound_jkt else "Bearer", pair.expires_in,
            " ".join(scopes), id_token, pair.refresh_token,
        )  # fmt: skip

    async def _subject(self, access_token: str) -> str:
        cfg = self._auth.current
        claims = await self._signer.verify(
            access_token, issuer=cfg.issuer, audience=None, leeway=cfg.leeway,
            typ=CLIENT_TOKEN_TYPE,
        )  # fmt: skip
        return str(claims["sub"])

    def _minter(self, client: Client, scopes: tuple[str, ...], jkt: str | None) -> AccessMinter:
        cfg = self._auth.current
        audience = client.audience[0] if client.audience else cfg.audience

        async def mint(
            user: User, groups: list[str], now: datetime, family_id: str
        ) -> tuple[str, str, int]:
            iat = int(now.timestamp())
            claims: dict[str, Any] = {
                "iss": cfg.issuer, "sub": user.id, "client_id": client.id, "aud": audience,
                "scope": " ".join(scopes), "sid": family_id, "org_id": user.org_id,
                "iat": iat, "exp": iat + cfg.access_token_ttl, "jti": new_id(),
            }  # fmt: skip
            if jkt is not None:
                claims["cnf"] = {"jkt": jkt}
            chosen = cfg.algorithm_for(audience, client.access_token_signed_response_alg)
            alg = self._signer.signing_algorithm(chosen)
            token = await self._signer.sign(claims, typ=CLIENT_TOKEN_TYPE, alg=alg)
            return token, alg, cfg.access_token_ttl

        return mint

    async def _id_token(
        self, client: Client, user_id: str, login: _Login, nonce: str | None, now: datetime,
        scopes: tuple[str, ...], users: UserRepo | None,
    ) -> str | None:  # fmt: skip
        """The ID token, with the ``authsvc`` scope's claims when ``scopes`` hold it (read
        through ``users``, the caller's unit of work, or a read of its own when None)."""
        if "openid" not in login.scopes:
            return None
        cfg = self._auth.current
        claims = id_token_claims(
            issuer=cfg.issuer, client_id=client.id, user_id=user_id, now=now,
            ttl=self._oidc.current.id_token_ttl,
            auth_time=datetime.fromtimestamp(login.auth_time).astimezone(),
            sid=login.sid, amr=login.amr, acr=login.acr, nonce=nonce,
        )  # fmt: skip
        if "authsvc" in scopes:
            if users is None:
                async with self._storage.read() as uow:
                    found = await uow.users.get_with_groups(user_id)
            else:
                found = await users.get_with_groups(user_id)
            if found is not None:
                claims.update(authsvc_claims(*found))
        alg = self._signer.signing_algorithm(id_token_alg(cfg, client))
        return await self._signer.sign(claims, typ=ID_TOKEN_TYPE, alg=alg)
