"""A relying party's back-channel logout endpoint for the tests (OpenID Connect Back-Channel
Logout 1.0 §2.5): an aiohttp server on 127.0.0.1 that records each POSTed ``logout_token``,
answering 503 to the first ``fail_first`` POSTs and 200 after; and the check a relying party
makes of a logout token (§2.6) with PyJWT over authsvc's JWKS."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs
import jwt
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from application.oauth.backchannel import BACKCHANNEL_LOGOUT_EVENT, LOGOUT_TOKEN_TYPE

ISSUER = "http://localhost:8080"


@attrs.define
class Receiver:
    """The recorded POSTs: ``tokens`` taken (answered 200), ``refused`` (answered 503),
    ``content_types`` of every POST."""

    fail_first: int = 0
    tokens: list[str] = attrs.field(factory=list)
    refused: list[str] = attrs.field(factory=list)
    content_types: list[str] = attrs.field(factory=list)
    server: TestServer | None = None

    async def _post(self, request: web.Request) -> web.Response:
        self.content_types.append(request.content_type)
        form = await request.post()
        token = str(form.get("logout_token", ""))
        if len(self.refused) < self.fail_first:
            self.refused.append(token)
            return web.Response(status=503)
        self.tokens.append(token)
        return web.Response(status=200)

    async def start(self) -> str:
        """Start serving; returns the endpoint's URL."""
        app = web.Application()
        app.router.add_post("/backchannel-logout", self._post)
        self.server = TestServer(app, host="127.0.0.1")
        await self.server.start_server()
        return str(self.server.make_url("/backchannel-logout"))

    async def close(self) -> None:
        if self.server is not None:
            await self.server.close()

    async def wait_for(self, count: int, timeout: float = 20.0) -> list[str]:
        """The tokens once at least ``count`` were taken (fails after ``timeout`` seconds)."""
        async with asyncio.timeout(timeout):
            while len(self.tokens) < count:
                await asyncio.sleep(0.05)
        return list(self.tokens)


async def verified_logout_token(client: TestClient, token: str, client_id: str) -> dict[str, Any]:
    """The claims of ``token`` after a relying party's checks (§2.6): signed by a key of the
    JWKS with its algorithm, ``typ`` ``logout+jwt``, ``iss``, ``aud`` = ``client_id``, ``iat``,
    ``exp``, ``jti``, ``sub`` and ``sid`` present, the back-channel logout event, no
    ``nonce``."""
    header = jwt.get_unverified_header(token)
    assert header["typ"] == LOGOUT_TOKEN_TYPE
    jwks = await (await client.get("/.well-known/jwks.json")).json()
    (key,) = [k for k in jwks["keys"] if k["kid"] == header["kid"]]
    assert header["alg"] == key["alg"] == "RS256"
    claims: dict[str, Any] = jwt.decode(
        token, jwt.PyJWK(key).key, algorithms=["RS256"], audience=client_id, issuer=ISSUER,
        options={"require": ["iss", "aud", "iat", "exp", "jti", "sub", "sid", "events"]},
    )  # fmt: skip
    assert claims["events"] == {BACKCHANNEL_LOGOUT_EVENT: {}}
    assert "nonce" not in claims
    assert claims["exp"] - claims["iat"] <= 120
    return claims
