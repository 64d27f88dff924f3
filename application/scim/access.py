"""Who calls ``/scim/v2`` (docs/reference/scim.md, docs/adr/0050): the client behind a client
credentials access token (RFC 9068) holding the ``scim`` scope, as the principal
``domain.policy.scim_principal`` makes of it."""

from __future__ import annotations

import attrs

from application.oauth.grants import CLIENT_TOKEN_TYPE
from application.oauth.token_status import is_user_token
from application.ports import Signer, Storage
from application.shared.settings import AuthSettings, Live
from domain import policy
from domain.errors import InvalidToken
from domain.policy import Principal

__all__ = ["ScimAuthenticator"]


@attrs.frozen
class ScimAuthenticator:
    """``await authenticator(token)`` → the ``Principal`` a SCIM request acts as.

    The token must be an ``at+jwt`` of this issuer for the audience ``auth.audience`` (the
    service's own), unexpired (``auth.leeway``), of the client credentials grant (a user's
    code-flow token is refused), not revoked (RFC 7009), of a client that still exists, is
    enabled and holds ``scim``. Raises ``InvalidToken`` (401) or ``Forbidden`` (403, the scope
    is missing); storage errors pass through.
    """

    _storage: Storage
    _signer: Signer
    _auth: Live[AuthSettings]

    async def __call__(self, token: str) -> Principal:
        """The principal of ``token``."""
        auth = self._auth.current
        claims = await self._signer.verify(
            token, issuer=auth.issuer, audience=auth.audience, leeway=auth.leeway,
            typ=CLIENT_TOKEN_TYPE,
        )  # fmt: skip
        client_id, jti = claims.get("client_id"), claims.get("jti")
        if not isinstance(client_id, str) or not isinstance(jti, str) or is_user_token(claims):
            raise InvalidToken("a client credentials access token is required")
        async with self._storage.read() as uow:
            if await uow.clients.is_revoked(jti):
                raise InvalidToken("the access token was revoked")
            client = await uow.clients.get(client_id)
        scope = claims.get("scope")
        return policy.scim_principal(client, scope.split(" ") if isinstance(scope, str) else ())
