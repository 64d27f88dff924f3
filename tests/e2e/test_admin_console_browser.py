"""The admin console in a real browser (contract section 18): Debian's Chromium
(``AUTHSVC_TEST_CHROMIUM``, e.g. ``/usr/bin/chromium``) driven by Playwright through
``executable_path`` (never ``playwright install``).

An org_admin signs in on /ui/login and walks every page, doing one action per area (end a
user's sessions, create a group and add a member, register a client and read its secret once,
filter the audit log), each checked over the JSON API; another organization's user is a 404
page. A superadmin sees the signing keys and another organization's user; a viewer gets the
403 page. axe-core (``tests/interop``'s lockfile, installed by ``npm ci``) runs on every console
page and on the hosted login and consent pages: no serious or critical violation. Screenshots
go to ``tests/artifacts/admin-console/`` (git-ignored), kept as the run's artifacts.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from aiohttp.test_utils import TestClient
from playwright.async_api import Browser, Page, async_playwright

from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from tests.e2e.conftest import PASSWORD, bearer
from tests.e2e.oidc_helpers import auth_params, pkce, register_client
from tests.e2e.servers import free_port
from tests.e2e.test_admin_http import World, log_in_as, make_world
from tests.interop.conftest import node_modules as node_modules  # the npm ci fixture

CHROMIUM = os.environ.get("AUTHSVC_TEST_CHROMIUM")
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "admin-console"
SEVERE = ("serious", "critical")


@pytest.fixture
def deployment() -> tuple[str, str]:
    """SQLite with RS256: the browser's part does not depend on the storage."""
    return ("sqlite", "RS256")


@pytest.fixture
def chromium() -> str:
    if CHROMIUM is None:
        pytest.skip("AUTHSVC_TEST_CHROMIUM is not set (e.g. /usr/bin/chromium, Debian's chromium)")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"AUTHSVC_TEST_CHROMIUM={CHROMIUM} does not exist")
    return CHROMIUM


class Walk:
    """One browser context's walk: axe on each page, a screenshot of each, CSP reports."""

    def __init__(self, page: Page, axe: str, name: str) -> None:
        self.page, self._axe, self._name = page, axe, name
        self.console_errors: list[str] = []
        page.on("console", self._console)

    def _console(self, message: Any) -> None:
        """Script errors and CSP refusals (a 404 page or favicon load is no script error)."""
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            self.console_errors.append(message.text)

    async def check(self, shot: str) -> None:
        """axe-core finds no serious or critical violation here; a full-page screenshot."""
        await self.page.evaluate(self._axe)
        assert await self.page.evaluate("typeof axe.run") == "function"
        result = await self.page.evaluate(
            "axe.run(document, {resultTypes: ['violations']})"
            ".then(r => r.violations.map(v => ({id: v.id, impact: v.impact,"
            " nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5)})))"
        )
        severe = [v for v in result if v["impact"] in SEVERE]
        assert severe == [], f"{self.page.url}: {severe}"
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        await self.page.screenshot(path=str(ARTIFACTS / f"{self._name}-{shot}.png"), full_page=True)


async def new_walk(browser: Browser, axe: str, name: str) -> Walk:
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    return Walk(await context.new_page(), axe, name)


async def sign_in(walk: Walk, base: str, email: str, check: bool = False) -> None:
    """Open /ui/admin, land on the login page, sign in: back on the console."""
    page = walk.page
    await page.goto(f"{base}/ui/admin")
    assert page.url.startswith(f"{base}/ui/login?return_to="), page.url
    if check:
        await walk.check("login")
    await page.fill("input[name=email]", email)
    await page.fill("input[name=password]", PASSWORD)
    await page.click("form[action='/ui/login'] button[type=submit]")
    await page.wait_for_url(f"{base}/ui/admin")


async def api(client: TestClient, token: str, path: str) -> Any:
    resp = await client.get(path, headers=bearer(token))
    assert resp.status == 200, await resp.text()
    return await resp.json()


async def org_admin_walk(client: TestClient, world: World, walk: Walk, base: str) -> None:
    page = walk.page
    token = await log_in_as(world, "org_admin")
    same, other = world.orgs["same"], world.orgs["other"]
    await sign_in(walk, base, "org_admin@default.example", check=True)
    assert await page.locator("#stat-users").inner_text() == "4"
    assert await page.locator("#keys").count() == 0
    await walk.check("dashboard")

    # users: the live search (htmx), one user, end its sessions
    await page.click("nav >> text=Users")
    await page.fill("#email", "TARG")
    await page.wait_for_url("**/ui/admin/users?email=TARG*")
    await page.wait_for_selector("text=target@default.example")
    assert await page.locator("text=target@acme.example").count() == 0
    await walk.check("users")
    await page.click("text=target@default.example")
    await page.wait_for_url(f"{base}/ui/admin/users/{same.target}")
    await walk.check("user")
    await page.click("text=End every session")
    await page.wait_for_selector("text=Every session of the user ended.")
    assert (await api(client, token, f"/users/{same.target}/sessions"))["items"] == []
    resp = await page.goto(f"{base}/ui/admin/users/{other.target}")
    assert resp is not None and resp.status == 404
    await walk.check("other-org-404")

    # groups: create one, add a member by email
    await page.goto(f"{base}/ui/admin/groups")
    await walk.check("groups")
    await page.fill("#group-name", "browser team")
    await page.click("text=Create group")
    await page.wait_for_selector("text=The group is created.")
    group_id = page.url.split("?")[0].rsplit("/", 1)[1]
    await page.fill("#member", "target@default.example")
    await page.click("text=Add member")
    await page.wait_for_selector("text=The member is added.")
    await walk.check("group")
    members = (await api(client, token, f"/groups/{group_id}"))["members"]
    assert [m["id"] for m in members] == [same.target]

    # OAuth clients: register, the secret once, and it works
    await page.goto(f"{base}/ui/admin/clients")
    await walk.check("clients")
    await page.fill("#client-name", "Browser portal")
    await page.fill("#client-scopes", "read")
    await page.click("text=Register client")
    await page.wait_for_selector("#client-secret")
    await walk.check("client-secret")
    secret = await page.locator("#client-secret").inner_text()
    client_id = await page.locator("#client-id").inner_text()
    basic = base64.b64encode(f"{client_id}:{secret}".encode()).decode()
    resp = await client.post("/oauth/token", data={"grant_type": "client_credentials"},
                             headers={"Authorization": f"Basic {basic}"})  # fmt: skip
    assert resp.status == 200, await resp.text()
    await page.reload()
    assert await page.locator("#client-secret").count() == 0
    assert (await api(client, token, f"/oauth/clients/{client_id}"))["name"] == "Browser portal"

    # the audit log, filtered by type
    await page.goto(f"{base}/ui/admin/audit")
    await page.select_option("#type", "client.created")
    await page.click("form.filters button")
    await page.wait_for_url("**type=client.created*")
    assert await page.locator("#events tbody tr").count() >= 1
    await walk.check("audit")
    assert walk.console_errors == [], walk.console_errors  # no CSP or script error


async def consent_page(client: TestClient, walk: Walk, base: str) -> None:
    """The hosted consent page passes axe too (signed in already: authorize shows it)."""
    app = await register_client(client, redirect_uris=("http://127.0.0.1:9/cb",))
    _, challenge = pkce()
    params = auth_params(app, challenge, redirect_uri="http://127.0.0.1:9/cb")
    await walk.page.goto(f"{base}/oauth/authorize?{urlencode(params)}")
    assert "/ui/consent" in walk.page.url, walk.page.url
    await walk.check("consent")


async def test_the_console_in_chromium(
    aiohttp_client: Callable[..., Awaitable[TestClient]],
    base_env: dict[str, str],
    chromium: str,
    node_modules: Path,
) -> None:
    port = free_port()
    base = f"http://localhost:{port}"
    environ = {**base_env, "AUTHSVC_AUTH__ISSUER": base}
    app = create_app(build_container(load_config(environ=environ), environ=environ))
    client = await aiohttp_client(app, server_kwargs={"port": port})
    world = await make_world(client)
    axe = (node_modules / "node_modules" / "axe-core" / "axe.min.js").read_text("utf-8")
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium, args=FLAGS)
        try:
            admin = await new_walk(browser, axe, "org_admin")
            await org_admin_walk(client, world, admin, base)
            await consent_page(client, admin, base)

            root = await new_walk(browser, axe, "superadmin")
            await sign_in(root, base, "root@example.com")
            assert await root.page.locator("#keys").count() == 1
            assert "RS256" in await root.page.locator("#keys").inner_text()
            await root.check("dashboard")
            other = world.orgs["other"]
            resp = await root.page.goto(f"{base}/ui/admin/users/{other.target}")
            assert resp is not None and resp.status == 200
            await root.check("other-org-user")

            await log_in_as(world, "viewer")
            viewer = await new_walk(browser, axe, "viewer")
            await viewer.page.goto(f"{base}/ui/admin")
            await viewer.page.fill("input[name=email]", "viewer@default.example")
            await viewer.page.fill("input[name=password]", PASSWORD)
            async with viewer.page.expect_response(f"{base}/ui/admin") as answered:
                await viewer.page.click("form[action='/ui/login'] button[type=submit]")
            assert (await answered.value).status == 403
            await viewer.check("403")
        finally:
            await browser.close()
