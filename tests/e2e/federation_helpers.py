"""Helpers of the federated login tests (contract section 16): panva ``oidc-provider`` as the
upstream (``tests/interop/upstream_op.mjs``) and its devInteractions login driven over HTTP."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import aiohttp
import pytest
from aiohttp.test_utils import TestClient

from tests.e2e.oidc_helpers import ISSUER, ORIGIN, csrf_of

REDIRECT = f"{ISSUER}/federation/test/callback"
_ACTION = re.compile(r'<form[^>]*action="([^"]+)"')
_OFFER = re.compile(r'name="offer" value="([^"]+)"')


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
