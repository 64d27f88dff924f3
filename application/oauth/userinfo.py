"""``/oauth/userinfo`` (OpenID Connect Core 1.0 §5.3; RFC 6750 §2.1, §3; RFC 9449 §7;
docs/reference/oauth-and-oidc.md): the claims of the user behind an access token of the code
flow."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import attrs

from application.oauth.grants import CLIENT_TOKEN_TYPE, DPOP_WINDOW
from application.oauth.token_status import is_user_token, live_user_of
from application.ports import Clock, DpopVerifier, Signer, Storage
from application.shared.settings import AuthSettings, Live
from domain.errors import InvalidDpopProof, InvalidToken

__all__ = ["UserInfo", "UserInfoError"]


class UserInfoError(Exception):
    """A refusal (RFC 6750 §3.1): ``status`` 401 ``invalid_token`` (or ``invalid_dpop_proof``)
    or 403 ``insufficient_scope``; ``scheme`` names the ``WWW-Authenticate`` challenge."""

    def __init__(self, status: int, error: str, description: str, scheme: str = "Bearer") -> None:
        super().__init__(description)
        self.status = status
        self.error = error
        self.description = description
        self.scheme = scheme


@attrs.frozen
class UserInfo:
    """``await userinfo(scheme, token, proof, method, urls)`` → ``{"sub", ...}``: ``sub``
    always; ``preferred_username`` with ``profile``; ``email`` and ``email_verified`` with
    ``email``; ``org_id``, ``role``, ``groups`` with ``authsvc``. The token must be an access
    token of the code flow (``at+jwt`` with ``sid``) holding ``openid``, its family live, its
    user enabled and its ``jti`` not revoked (RFC 7009; ``token_status.live_user_of``); a
    DPoP-bound token (``cnf.jkt``) only with ``scheme`` ``DPoP`` and a proof of that key for
    this request (``ath`` included), whose ``jti`` is claimed once in the shared replay store
    (``ClientRepo.claim_proof_jti``, like the token endpoint): a replayed proof is
    ``invalid_dpop_proof``."""

    _storage: Storage
    _signer: Signer
    _auth: Live[AuthSettings]
    _dpop: DpopVerifier
    _clock: Clock

    async def __call__(
        self, scheme: str, token: str, proof: str | None, method: str, urls: tuple[str, ...]
    ) -> dict[str, Any]:
        """The claims; raises ``UserInfoError``."""
        cfg = self._auth.current
        try:
            claims = await self._signer.verify(
                token, issuer=cfg.issuer, audience=None, leeway=cfg.leeway, typ=CLIENT_TOKEN_TYPE
            )
        except InvalidToken:
            raise UserInfoError(401, "invalid_token", "the access token is not valid") from None
        if not is_user_token(claims):
            raise UserInfoError(401, "invalid_token", "not an access token of a user")
        await self._check_binding(scheme, token, proof, method, urls, claims)
        scopes = str(claims.get("scope", "")).split(" ")
        if "openid" not in scopes:
            raise UserInfoError(403, "insufficient_scope", "the token lacks the openid scope")
        async with self._storage.read() as uow:
            found = await live_user_of(uow, claims, self._clock.now())
        if found is None:
            raise UserInfoError(401, "invalid_token", "the access token was revoked")
        user, groups = found
        answer: dict[str, Any] = {"sub": user.id}
        if "profile" in scopes:
            answer["preferred_username"] = user.email
        if "email" in scopes:
            answer["email"] = user.email
            answer["email_verified"] = user.email_verified
        if "authsvc" in scopes:
            answer.update(org_id=user.org_id, role=user.role.value, groups=groups)
        return answer

    async def _check_binding(
        self,
        scheme: str,
        token: str,
        proof: str | None,
        method: str,
        urls: tuple[str, ...],
        claims: dict[str, Any],
    ) -> None:
        cnf = claims.get("cnf")
        jkt = cnf.get("jkt") if isinstance(cnf, dict) else None
        if jkt is None:
            if scheme != "Bearer":
                raise UserInfoError(401, "invalid_token", "the token is not DPoP-bound", "DPoP")
            return
        if scheme != "DPoP" or proof is None:
            raise UserInfoError(401, "invalid_token", "a DPoP-bound token needs DPoP", "DPoP")
        now = self._clock.now()
        try:
            checked = self._dpop.verify(
                proof, method, urls, now, DPOP_WINDOW, access_token=token, jkt=str(jkt),
            )  # fmt: skip
        except InvalidDpopProof as e:
            raise UserInfoError(401, "invalid_dpop_proof", e.reason, "DPoP") from None
        remember = datetime.fromtimestamp(max(checked.iat, int(now.timestamp())) + DPOP_WINDOW, UTC)
        async with self._storage.begin() as uow:
            fresh = await uow.clients.claim_proof_jti(f"{checked.jkt}:{checked.jti}", remember)
            await uow.commit()
        if not fresh:
            raise UserInfoError(
                401, "invalid_dpop_proof", "the DPoP proof was used already", "DPoP"
            )
