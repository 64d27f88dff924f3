"""Helpers of the federated login tests (docs/reference/federation.md): panva ``oidc-provider`` as
the upstream (``tests/interop/upstream_op.mjs``) and its devInteractions login driven over HTTP."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import aiohttp
import jwt
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.e2e.oidc_helpers import ISSUER, ORIGIN, csrf_of

REDIRECT = f"{ISSUER}/federation/test/callback"
CLIENT_ID = "fake-client"
"""The ``client_id`` the fake provider's tokens are issued to."""
_ACTION = re.compile(r'<form[^>]*action="([^"]+)"')
_OFFER = re.compile(r'name="offer" value="([^"]+)"')


class FakeIdp:
    """A small fake OpenID provider (aiohttp; tokens signed with PyJWT): discovery (plus
    ``discovery_extra``), JWKS (keys ``k1``, ``k2``), a token endpoint answering
    ``self.id_token`` (claims changed by ``claims_override``; ``None`` drops one), and userinfo
    answering ``self.userinfo_sub`` (else the token's ``sub``); counts JWKS fetches."""

    def __init__(self) -> None:
        self.keys = {k: rsa.generate_private_key(public_exponent=65537, key_size=2048)
                     for k in ("k1", "k2", "rogue")}  # fmt: skip
        self.published = ["k1", "k2"]
        self.issuer = ""
        self.jwks_fetches = 0
        self.claims_override: dict[str, Any] = {}
        self.header: dict[str, Any] = {"kid": "k1"}
        self.sign_with = "k1"
        self.userinfo_sub: str | None = None
        self.nonce = ""
        self.discovery_extra: dict[str, Any] = {}

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/.well-known/openid-configuration", self.discovery)
        app.router.add_get("/jwks", self.jwks)
        app.router.add_post("/token", self.token)
        app.router.add_get("/userinfo", self.userinfo)
        return app

    async def discovery(self, _: web.Request) -> web.Response:
        return web.json_response({
            "issuer": self.issuer, "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token", "jwks_uri": f"{self.issuer}/jwks",
            "userinfo_endpoint": f"{self.issuer}/userinfo",
            "id_token_signing_alg_values_supported": ["RS256"], **self.discovery_extra,
        })  # fmt: skip

    async def jwks(self, _: web.Request) -> web.Response:
        self.jwks_fetches += 1
        keys = []
        for kid in self.published:
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.keys[kid].public_key()))
            keys.append({**jwk, "kid": kid, "use": "sig", "alg": "RS256"})
        return web.json_response({"keys": keys})

    def id_token(self, nonce: str | None = None) -> str:
        now = int(time.time())
        claims = {"iss": self.issuer, "sub": "fake-sub", "aud": CLIENT_ID, "iat": now,
                  "exp": now + 300, "email": "fake@example.com", "email_verified": True}  # fmt: skip
        if nonce is not None:
            claims["nonce"] = nonce
        claims.update(self.claims_override)
        claims = {k: v for k, v in claims.items() if v is not None}
        if self.header.get("alg") == "none":
            return jwt.encode(claims, None, algorithm="none")
        return jwt.encode(claims, self.keys[self.sign_with], algorithm="RS256",
                          headers={k: v for k, v in self.header.items() if v is not None})  # fmt: skip

    async def token(self, request: web.Request) -> web.Response:
        return web.json_response({"access_token": "at", "token_type": "Bearer",
                                  "id_token": self.id_token(self.nonce)})  # fmt: skip

    async def userinfo(self, _: web.Request) -> web.Response:
        sub = self.userinfo_sub or self.claims_override.get("sub") or "fake-sub"
        return web.json_response({"sub": sub, "email": "fake@example.com"})


@contextmanager
def upstream_process(node_modules: Path, redirect_uri: str) -> Iterator[dict[str, str]]:
    """``upstream_op.mjs`` (oidc-provider) registered with ``redirect_uri``, on an ephemeral
    loopback port: ``{"issuer", "client_id", "client_secret"}``; stopped on exit."""
    proc = subprocess.Popen(
        ["node", str(node_modules / "upstream_op.mjs")], cwd=node_modules,
        env={"PATH": "/usr/bin:/bin", "REDIRECT_URI": redirect_uri},
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    try:
        line = proc.stdout.readline()
        assert line, "upstream_op.mjs exited before it listened"
        yield json.loads(line)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="session")
def upstream(node_modules: Path) -> Iterator[dict[str, str]]:
    """A running oidc-provider for the in-process apps (``ISSUER``'s callback)."""
    with upstream_process(node_modules, REDIRECT) as up:
        yield up


def provider_toml(up: dict[str, str], **extra: Any) -> str:
    """A ``[[federation.providers]]`` table named ``test`` for ``up``."""
    fields = {
        "id": "test",
        "name": "TestIdP",
        "issuer": up["issuer"],
        "client_id": up["client_id"],
        "client_secret": up["client_secret"],
        **extra,
    }
    lines = [f"{k} = {json.dumps(v)}" for k, v in fields.items()]
    return "[[federation.providers]]\n" + "\n".join(lines) + "\n"


async def upstream_login(start_location: str, login: str, abort: bool = False) -> dict[str, str]:
    """Drive the upstream's devInteractions from the authorization URL to the redirect back to
    authsvc: returns the callback's query (``code``, ``state``, ``iss``, or ``error``)."""
    jar = aiohttp.CookieJar(unsafe=True)
    async with aiohttp.ClientSession(cookie_jar=jar) as http:
        url = start_location
        for _ in range(20):
            if url.startswith(REDIRECT):
                return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
            async with http.get(url, allow_redirects=False) as resp:
                if resp.status in (302, 303):
                    url = urljoin(url, resp.headers["Location"])
                    continue
                assert resp.status == 200, await resp.text()
                html = await resp.text()
            uid_path = urlsplit(url).path
            if abort:
                url = urljoin(url, uid_path.rstrip("/") + "/abort")
                continue
            action = urljoin(url, unescape(_ACTION.search(html).group(1)))  # type: ignore[union-attr]
            form = ({"prompt": "login", "login": login, "password": "x"}
                    if 'name="login"' in html else {"prompt": "consent"})  # fmt: skip
            async with http.post(action, data=form, allow_redirects=False) as resp:
                assert resp.status in (302, 303), await resp.text()
                url = urljoin(action, resp.headers["Location"])
    raise AssertionError("the upstream login did not come back")


async def start(client: TestClient, return_to: str = "/ui/signed-in", **params: str) -> str:
    """GET /federation/test/start → the provider's URL (303)."""
    resp = await client.get("/federation/test/start", params={"return_to": return_to, **params},
                            allow_redirects=False)  # fmt: skip
    assert resp.status == 303, await resp.text()
    return resp.headers["Location"]


async def callback(client: TestClient, query: dict[str, str]) -> Any:
    return await client.get("/federation/test/callback", params=query, allow_redirects=False)


async def start_link(client: TestClient, provider: str = "test") -> Any:
    """POST /ui/account/link (the account page's "Link" button, with its CSRF token) → the
    response (303 to the provider, or to /ui/login without a recent login)."""
    await client.get("/ui/account", allow_redirects=False)  # the page sets the CSRF cookie
    form = {"provider": provider, "csrf_token": csrf_of(client)}
    return await client.post("/ui/account/link", data=form, headers=ORIGIN,
                             allow_redirects=False)  # fmt: skip


def offer_of(html: str) -> str:
    """The link offer's token on the confirmation page the callback of a link shows."""
    found = _OFFER.search(html)
    assert found is not None, html
    return found.group(1)


async def answer_link(client: TestClient, offer: str, decision: str = "allow") -> Any:
    """POST /ui/account/link/confirm: "Link" (``allow``) or "Cancel" on the confirmation."""
    form = {"offer": offer, "decision": decision, "csrf_token": csrf_of(client)}
    return await client.post("/ui/account/link/confirm", data=form, headers=ORIGIN,
                             allow_redirects=False)  # fmt: skip


@asynccontextmanager
async def fake_idp() -> AsyncIterator[FakeIdp]:
    """A ``FakeIdp`` serving on a loopback port (``issuer`` set); closed on exit."""
    idp = FakeIdp()
    server = TestServer(idp.app(), host="127.0.0.1")
    await server.start_server()
    idp.issuer = str(server.make_url("")).rstrip("/")
    try:
        yield idp
    finally:
        await server.close()


def fake_provider_toml(idp: FakeIdp, provider_id: str = "test", **extra: Any) -> str:
    """A ``[[federation.providers]]`` table for the fake provider ``idp``."""
    fields = {"id": provider_id, "name": provider_id.capitalize() + " IdP", "issuer": idp.issuer,
              "client_id": CLIENT_ID, "client_secret": "s", **extra}  # fmt: skip
    lines = [f"{k} = {json.dumps(v)}" for k, v in fields.items()]
    return "[[federation.providers]]\n" + "\n".join(lines) + "\n"
