"""The review's cross-tenant attack in a real browser (security review s5, finding 1; ADR 0036):
Debian's Chromium (``AUTHSVC_TEST_CHROMIUM``) driven by Playwright through ``executable_path``,
one browser for the module, on SQLite and PostgreSQL.

globex's org_admin registers a code-flow client whose redirect URI is its own
(``https://evil.globex.example/cb``); asking for ``skip_consent`` is refused (403). The
superadmin of ``default`` is signed in to the console. A page of the attacker's, on another
origin (served by Playwright's ``route``), sends the browser to the client's authorization
URL, as the review's ``t_pw2.py`` did. No code reaches the attacker: the browser ends at the
redirect URI with ``error=access_denied``. When a superadmin gives the client
``all_organizations`` and ``skip_consent``, the browser stops on the consent page, which names
globex, the redirect host and the signed-in superadmin; still no code.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer
from playwright.async_api import Browser, Route, async_playwright

from domain.model import Role
from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from tests.e2e.accounts_world import ROOT, add_user, login
from tests.e2e.helpers import ONE_PER_BACKEND, PASSWORD, assert_problem, bearer, container_of
from tests.e2e.oidc_helpers import pkce
from tests.e2e.servers import free_port
from tests.interop.driver import FLAGS

ATTACKER = "https://attacker.example"
EVIL_CB = "https://evil.globex.example/cb"

pytestmark = pytest.mark.asyncio(loop_scope="module")  # one browser for the module


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend."""
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def chromium() -> str:
    path = os.environ.get("AUTHSVC_TEST_CHROMIUM")
    if path is None:
        pytest.skip("AUTHSVC_TEST_CHROMIUM is not set (e.g. /usr/bin/chromium, Debian's chromium)")
    if not Path(path).exists():
        pytest.fail(f"AUTHSVC_TEST_CHROMIUM={path} does not exist")
    return path


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def browser(chromium: str) -> AsyncIterator[Browser]:
    async with async_playwright() as pw:
        launched = await pw.chromium.launch(executable_path=chromium, args=FLAGS)
        try:
            yield launched
        finally:
            await launched.close()


@pytest_asyncio.fixture(loop_scope="module")
async def served(base_env: dict[str, str]) -> AsyncIterator[tuple[TestClient, str]]:
    """The app on a real port and its issuer, its loopback URL (the browser's origin)."""
    port = free_port()
    base = f"http://localhost:{port}"
    environ = {**base_env, "AUTHSVC_AUTH__ISSUER": base}
    app = create_app(build_container(load_config(environ=environ), environ=environ))
    async with TestClient(TestServer(app, port=port)) as client:
        yield client, base


async def test_an_attackers_page_gets_no_code_of_another_tenants_superadmin(
    served: tuple[TestClient, str], browser: Browser
) -> None:
    http, base = served
    await container_of(http).create_superadmin()(ROOT, PASSWORD)
    await add_user(http, "admin@globex.example", Role.ORG_ADMIN, "globex")
    admin_b = (await login(http, "admin@globex.example"))["access_token"]
    root = (await login(http, ROOT))["access_token"]
    body = {"name": "authsvc", "scopes": [], "redirect_uris": [EVIL_CB],
            "grant_types": ["authorization_code", "refresh_token"]}  # fmt: skip
    resp = await http.post("/oauth/clients", json={**body, "skip_consent": True},
                           headers=bearer(admin_b))  # fmt: skip
    await assert_problem(resp, 403, "forbidden")
    resp = await http.post("/oauth/clients", json=body, headers=bearer(admin_b))
    assert resp.status == 201, await resp.text()
    client_id = (await resp.json())["client_id"]
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": EVIL_CB,
              "scope": "openid email offline_access", "state": "st123",
              "code_challenge": pkce()[1], "code_challenge_method": "S256"}  # fmt: skip
    authorize_url = f"{base}/oauth/authorize?{urlencode(params)}"

    context = await browser.new_context()
    reached: list[str] = []  # every URL the attacker's redirect URI received

    async def attacker_page(route: Route) -> None:
        html = f"<!doctype html><title>win a prize</title><script>location = {authorize_url!r};"
        await route.fulfill(status=200, content_type="text/html", body=html + "</script>")

    async def evil_callback(route: Route) -> None:
        reached.append(route.request.url)
        await route.fulfill(status=200, content_type="text/html", body="<title>got it</title>")

    await context.route(f"{ATTACKER}/**", attacker_page)
    await context.route("https://evil.globex.example/**", evil_callback)
    try:
        page = await context.new_page()
        # The superadmin signs in to the console (a hosted session, SameSite=Lax).
        await page.goto(f"{base}/ui/login?return_to=/ui/admin")
        await page.fill("input[name=email]", ROOT)
        await page.fill("input[name=password]", PASSWORD)
        await page.click("button[type=submit]")
        await page.wait_for_url(f"{base}/ui/admin")

        # The attacker's page: at once at the redirect URI, with access_denied and no code.
        await page.goto(f"{ATTACKER}/")
        await page.wait_for_url(f"{EVIL_CB}?**")
        assert len(reached) == 1, reached
        query = parse_qs(urlsplit(reached[0]).query)
        assert query["error"] == ["access_denied"] and "code" not in query, reached
        assert query["state"] == ["st123"]

        # Even trusted by a superadmin for every organization, and first-party for globex,
        # it does not skip the consent page of another organization's user.
        resp = await http.patch(f"/oauth/clients/{client_id}", headers=bearer(root),
                                json={"skip_consent": True, "all_organizations": True})  # fmt: skip
        assert resp.status == 200, await resp.text()
        await page.goto(f"{ATTACKER}/")
        await page.wait_for_url(f"{base}/ui/consent?**")
        assert len(reached) == 1, reached  # nothing more reached the attacker
        facts = await page.locator("dl.facts").inner_text()
        assert "globex" in facts and "evil.globex.example" in facts and ROOT in facts
        assert await page.locator("#not-you").count() == 1
    finally:
        await context.close()
    assert all("code=" not in url for url in reached)
