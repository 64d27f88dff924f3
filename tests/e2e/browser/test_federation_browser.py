"""Federated login in a real browser (docs/reference/federation.md; research oidc-provider.md §6,
UP-01, UP-02, UP-11): Playwright drives Debian's Chromium (``tests.interop.driver.UserAgent``)
through a real ``authsvc serve`` (SQLite and PostgreSQL) and panva ``oidc-provider`` as the upstream
(``tests/interop/upstream_op.mjs``), both on loopback ports; the relying party of UP-11 is panva
``openid-client`` (``tests/interop/rp_flow.mjs``).

Skipped, with the reason, only without node/npm or without Chromium (``AUTHSVC_TEST_CHROMIUM``
unset and no ``/usr/bin/chromium``; set but missing is a failure)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import aiohttp
import jwt
import pytest
from playwright.async_api import Page

from tests.e2e.federation_helpers import provider_toml, upstream_process
from tests.e2e.servers import ROOT, Server, each_backend, free_port  # noqa: F401 - fixture
from tests.interop.driver import (
    Action,
    DevInteractions,
    HostedPages,
    UserAgent,
    chromium_browser,
    run_script,
)

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::ResourceWarning")]

ADMIN, PASSWORD = "root@example.com", "correct horse battery"
LOGIN = "zoe@example.com"
"""The upstream login (oidc-provider devInteractions): ``sub`` and a verified email."""
RP_CALLBACK = "http://127.0.0.1:8765/cb"
"""The relying parties' redirect URI: the browser step answers it, nothing listens there."""
POST_LOGOUT = "http://127.0.0.1:8765/signed-out"
FLOW_CHECKS = {"discovery", "authorization_code_grant", "id_token_claims", "userinfo", "refresh",
               "code_reuse_refused_and_revokes", "end_session", "prompt_none_after_logout"}  # fmt: skip


@dataclass(frozen=True)
class FederatedPages:
    """A user who signs in with the upstream: "Continue with TestIdP" on authsvc's login page,
    the upstream's devInteractions login and consent (as ``login``), then "Allow" on authsvc's
    consent page."""

    login: str

    async def next_action(self, page: Page) -> Action | None:
        button = page.get_by_role("link", name="Continue with TestIdP")
        if await button.count():
            return lambda: button.click()
        upstream = await DevInteractions(self.login).next_action(page)
        if upstream is not None:
            return upstream
        allow = page.locator("button[name=decision][value=allow]")
        if await allow.count():
            return lambda: allow.click()
        return None


@dataclass(frozen=True)
class Deployment:
    """authsvc serving at ``base`` with the upstream ``up`` as provider ``test``."""

    base: str
    up: dict[str, str]
    server: Server


@pytest.fixture
def served(
    node_modules: Path,
    tmp_path: Path,
    storage_env: dict[str, str],
) -> Iterator[Deployment]:
    """``authsvc serve`` (the test's storage) whose issuer is its loopback address, with the
    upstream oidc-provider registered for its callback, and a superadmin."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with upstream_process(node_modules, f"{base}/federation/test/callback") as up:
        config = tmp_path / "authsvc.toml"
        config.write_text(provider_toml(up))
        env = {**storage_env, "AUTHSVC_CONFIG": str(config),
               "AUTHSVC_AUTH__KEY_DIR": str(tmp_path / "keys"),
               "AUTHSVC_AUTH__BCRYPT_ROUNDS": "4", "AUTHSVC_AUTH__ISSUER": base}  # fmt: skip
        subprocess.run(
            [sys.executable, "-m", "entrypoints.cli", "create-superadmin", "--email", ADMIN],
            cwd=ROOT, env={**os.environ, **env, "AUTHSVC_BOOTSTRAP_PASSWORD": PASSWORD},
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        server = Server(env, port=port)
        try:
            yield Deployment(base, up, server)
        finally:
            server.stop()


async def _json(http: aiohttp.ClientSession, method: str, url: str, token: str | None = None,
                **body: Any) -> tuple[int, Any]:  # fmt: skip
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with http.request(method, url, json=body or None, headers=headers) as resp:
        return resp.status, await resp.json(content_type=None)


async def _client(base: str, skip_consent: bool) -> dict[str, Any]:
    """A code-flow client registered by the superadmin: confidential with ``skip_consent``
    (a first-party app), else public (the user consents)."""
    fields = ({"public": False, "token_endpoint_auth_method": "client_secret_basic"}
              if skip_consent else {"public": True, "token_endpoint_auth_method": "none"})  # fmt: skip
    async with aiohttp.ClientSession() as http:
        status, pair = await _json(http, "POST", base + "/login", email=ADMIN, password=PASSWORD)
        assert status == 200, pair
        status, client = await _json(
            http, "POST", base + "/oauth/clients", pair["access_token"], name="fed app",
            scopes=[], grant_types=["authorization_code", "refresh_token"],
            redirect_uris=[RP_CALLBACK], post_logout_redirect_uris=[POST_LOGOUT],
            skip_consent=skip_consent, **fields,
        )  # fmt: skip
        assert status == 201, client
        return client  # type: ignore[no-any-return]


async def _users(base: str, email: str) -> list[dict[str, Any]]:
    async with aiohttp.ClientSession() as http:
        _, pair = await _json(http, "POST", base + "/login", email=ADMIN, password=PASSWORD)
        status, page = await _json(http, "GET", base + "/users?limit=100", pair["access_token"])
        assert status == 200, page
    return [u for u in page["items"] if u["email"] == email]


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


async def test_continue_with_in_chromium_signs_in_and_authorize_is_then_silent(
    served: Deployment,
    chromium: str,
) -> None:
    """UP-01, UP-02, UP-11 (its last step) in a browser: Chromium clicks "Continue with
    TestIdP" on /ui/login, signs in at oidc-provider and lands back on /ui/signed-in signed in
    (a new user — its email unverified: the provider has no ``trust_email`` — and the
    identity on /ui/account); then /oauth/authorize with
    ``prompt=none`` for a ``skip_consent`` client answers a code with no page at all, and the
    code's ID token says ``amr ["fed"]`` for that user. A second browser signing in the same way
    is the same user (UP-02)."""
    base = served.base
    client = await _client(base, skip_consent=True)
    async with chromium_browser(chromium) as browser:
        agent = await UserAgent.open(browser, FederatedPages(LOGIN), (RP_CALLBACK,))
        try:
            final = await agent.visit(f"{base}/ui/login")
            trail = "\n".join(agent.trail) + "\n" + served.server.log()[-3000:]
            assert final == f"{base}/ui/signed-in", trail
            assert any(served.up["issuer"] in step for step in agent.trail), trail
            assert "You are signed in." in await agent.page.locator("body").inner_text()
            await agent.page.goto(f"{base}/ui/account")
            account = await agent.page.locator("body").inner_text()
            assert LOGIN in account and "Unlink TestIdP" in account, account
            # Silent authorization: prompt=none, no login and no consent page.
            verifier, challenge = _pkce()
            state, nonce = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
            query = urlencode({
                "response_type": "code", "client_id": client["client_id"],
                "redirect_uri": RP_CALLBACK, "scope": "openid email", "state": state,
                "nonce": nonce, "code_challenge": challenge, "code_challenge_method": "S256",
                "prompt": "none",
            })  # fmt: skip
            steps_before = len(agent.trail)
            landed = await agent.visit(f"{base}/oauth/authorize?{query}")
            assert not any("  page " in s for s in agent.trail[steps_before:]), agent.trail
        finally:
            await agent.close()
        back = {k: v[0] for k, v in parse_qs(urlsplit(landed).query).items()}
        assert landed.startswith(RP_CALLBACK) and "code" in back, landed
        assert back["state"] == state and back["iss"] == base
        async with aiohttp.ClientSession() as http:
            form = {"grant_type": "authorization_code", "code": back["code"],
                    "redirect_uri": RP_CALLBACK, "code_verifier": verifier}  # fmt: skip
            basic = aiohttp.encode_basic_auth(client["client_id"], client["client_secret"])
            async with http.post(base + "/oauth/token", data=form,
                                 headers={"Authorization": basic}) as resp:  # fmt: skip
                tokens = await resp.json()
                assert resp.status == 200, tokens
        claims = jwt.decode(tokens["id_token"], options={"verify_signature": False})
        (user,) = await _users(base, LOGIN)
        assert user["email_verified"] is False  # the provider has no trust_email (review s5)
        assert (claims["sub"], claims["amr"], claims["nonce"]) == (user["id"], ["fed"], nonce)
        # UP-02: another browser, the same upstream account → the same user.
        again = await UserAgent.open(browser, FederatedPages(LOGIN), (RP_CALLBACK,))
        try:
            assert await again.visit(f"{base}/ui/login") == f"{base}/ui/signed-in", again.trail
        finally:
            await again.close()
    assert [u["id"] for u in await _users(base, LOGIN)] == [user["id"]]


async def test_up11_full_chain_from_a_relying_party(
    served: Deployment,
    chromium: str,
    node_modules: Path,
) -> None:
    """UP-11: openid-client (``rp_flow.mjs``, a public client) → our /oauth/authorize → our
    login page → "Continue with TestIdP" → oidc-provider's login → back → our consent page →
    the code → tokens: the ID token's ``amr`` is ``["fed"]`` and its ``sub`` the authsvc user
    the upstream login made; userinfo, a refresh, code reuse, logout and prompt=none after the
    logout (login_required) pass the library's checks too. (prompt=none while signed in is
    silent: the test above.)"""
    base = served.base
    client = await _client(base, skip_consent=False)
    async with chromium_browser(chromium) as browser:
        agent = await UserAgent.open(browser, FederatedPages(LOGIN), (RP_CALLBACK, POST_LOGOUT))
        env = {"ISSUER": base, "CLIENT_ID": client["client_id"], "MODE": "public",
               "REDIRECT_URI": RP_CALLBACK, "POST_LOGOUT_REDIRECT_URI": POST_LOGOUT}  # fmt: skip
        run = await run_script(node_modules, "rp_flow.mjs", env, agent)
        await agent.close()
    why = run.explain(agent) + "\nserver log:\n" + served.server.log()[-4000:]
    assert run.failed == 0 and run.returncode == 0, why
    assert set(run.result["checks"]) == FLOW_CHECKS, why
    trail = "\n".join(agent.trail)
    assert "/ui/login" in trail and served.up["issuer"] in trail, why
    assert "/ui/consent" in trail, why
    claims = run.result["id_token_claims"]
    (user,) = await _users(base, LOGIN)
    assert claims["sub"] == user["id"] and claims["amr"] == ["fed"], json.dumps(claims)
    assert claims["azp"] == client["client_id"] and claims["acr"] == "1"
    assert run.result["userinfo"]["email"] == LOGIN


EVIL = "http://localhost:9/evil"
"""Another site's page (answered by the browser's route, nothing listens there)."""


async def _through_upstream(page: Page, until: str) -> None:
    """Act on the upstream's devInteractions pages until the browser is back at ``until``."""
    for _ in range(6):
        if page.url.startswith(until):
            return
        action = await DevInteractions(LOGIN).next_action(page)
        assert action is not None, (page.url, await page.locator("body").inner_text())
        async with page.expect_navigation(wait_until="domcontentloaded"):
            await action()
    assert page.url.startswith(until), page.url


async def test_linking_needs_the_account_pages_post_and_a_confirmation(
    served: Deployment,
    chromium: str,
) -> None:
    """Review s5, finding 7 (docs/reference/federation.md), in a browser: alice has a fresh hosted
    login. Another site's page navigates her browser to the old link URL
    (``/federation/test/start?link=1``, a cross-site GET carrying her SameSite=Lax session):
    it lands on /ui/account, nothing is linked and the provider is never visited. Her click
    on "Link TestIdP" (a POST of the account page) goes to the provider, whose callback shows
    a confirmation naming TestIdP and the upstream email — still nothing linked — and only
    her "Link TestIdP" there links it."""
    base = served.base
    async with aiohttp.ClientSession() as http:
        status, _ = await _json(http, "POST", base + "/register", email="alice@example.com",
                                password=PASSWORD)  # fmt: skip
        assert status == 201
        _, pair = await _json(http, "POST", base + "/login", email="alice@example.com",
                              password=PASSWORD)  # fmt: skip

    async def identities() -> list[dict[str, Any]]:
        async with aiohttp.ClientSession() as http:
            _, listed = await _json(http, "GET", base + "/me/identities", pair["access_token"])
        return listed["items"]  # type: ignore[no-any-return]

    async with chromium_browser(chromium) as browser:
        agent = await UserAgent.open(browser, HostedPages("alice@example.com", PASSWORD), ())
        page = agent.page
        visited: list[str] = []
        page.on("request", lambda request: visited.append(request.url))
        try:
            landed = await agent.visit(f"{base}/ui/login?return_to=%2Fui%2Faccount")
            assert landed == f"{base}/ui/account", agent.trail
            link_url = f"{base}/federation/test/start?link=1&return_to=%2Fui%2Faccount"
            html = f'<a id="go" href="{link_url}">win a prize</a>'
            await agent.context.route(EVIL, lambda route: route.fulfill(
                status=200, content_type="text/html", body=html))  # fmt: skip
            await page.goto(EVIL)
            async with page.expect_navigation(wait_until="domcontentloaded"):
                await page.click("#go")
            assert page.url == f"{base}/ui/account", page.url
            assert "No provider is linked." in await page.locator("body").inner_text()
            assert not any(u.startswith(served.up["issuer"]) for u in visited), visited
            assert await identities() == []
            # The account page's own button: a POST, then the provider, then a confirmation.
            async with page.expect_navigation(wait_until="domcontentloaded"):
                await page.click("form[action='/ui/account/link'] button")
            await _through_upstream(page, f"{base}/federation/test/callback")
            text = await page.locator("body").inner_text()
            assert "Link TestIdP to your account?" in text and LOGIN in text, text
            assert await identities() == []
            async with page.expect_navigation(wait_until="domcontentloaded"):
                await page.click("button[name=decision][value=allow]")
            assert page.url == f"{base}/ui/account", page.url
            assert "Unlink TestIdP" in await page.locator("body").inner_text()
        finally:
            await agent.close()
    linked = await identities()
    assert [(i["provider"], i["email"]) for i in linked] == [("test", LOGIN)], linked
