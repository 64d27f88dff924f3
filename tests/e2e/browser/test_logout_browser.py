"""Logout CSRF in a real browser (docs/reference/oauth-and-oidc.md; RP-Initiated Logout 1.0 §2): a
page of another origin sends the victim's browser, by a top-level navigation, to ``/oauth/logout``
with the attacker's own ID token as ``id_token_hint``; the victim's session must survive (the
confirmation page is shown instead).

Debian's Chromium (``AUTHSVC_TEST_CHROMIUM``) driven by Playwright through ``executable_path``;
the attacker's origin is a Playwright route, nothing listens there."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from urllib.parse import urlencode

import pytest
from aiohttp.test_utils import TestClient
from playwright.async_api import BrowserContext, Page, Route, async_playwright

from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from tests.e2e.browser.test_oidc_passkey_browser import FLAGS, chromium  # noqa: F401 - fixture
from tests.e2e.helpers import PASSWORD
from tests.e2e.oidc_helpers import (
    REDIRECT,
    Registered,
    auth_params,
    exchange,
    pkce,
    query_of,
    register_client,
    register_user,
)
from tests.e2e.servers import free_port

ATTACKER = "http://attacker.example"


async def sign_in(page: Page, issuer: str, email: str) -> None:
    """Fill and send the login page shown in ``page``."""
    await page.wait_for_url(f"{issuer}/ui/login?**")
    await page.fill("input[name=email]", email)
    await page.fill("input[name=password]", PASSWORD)
    await page.click("form[action='/ui/login'] button[type=submit]")


async def id_token_in(
    context: BrowserContext, client: TestClient, app: Registered, issuer: str, email: str
) -> str:
    """The code flow for ``email`` in ``context`` (the client's callback is a route); returns
    the ID token."""
    codes: list[str] = []

    async def callback(route: Route) -> None:
        codes.append(query_of(route.request.url)["code"])
        await route.fulfill(status=200, body="callback reached")

    await context.route(f"{REDIRECT}*", callback)
    verifier, challenge = pkce()
    page = await context.new_page()
    await page.goto(f"{issuer}/oauth/authorize?{urlencode(auth_params(app, challenge))}")
    await sign_in(page, issuer, email)
    await page.wait_for_url(f"{REDIRECT}?**")
    resp = await exchange(client, app, codes[0], verifier)
    assert resp.status == 200, await resp.text()
    return str((await resp.json())["id_token"])


@pytest.fixture
def deployment() -> tuple[str, str]:
    """SQLite with RS256: the browser's part does not depend on the storage (the rule is
    checked on both backends over HTTP in ``test_oidc_logout``)."""
    return ("sqlite", "RS256")


async def test_an_attackers_own_hint_does_not_sign_the_victim_out(
    aiohttp_client: Callable[..., Awaitable[TestClient]],
    base_env: dict[str, str],
    chromium: str,  # noqa: F811
) -> None:
    port = free_port()
    issuer = f"http://localhost:{port}"
    environ = {**base_env, "AUTHSVC_AUTH__ISSUER": issuer}
    app = create_app(build_container(load_config(environ=environ), environ=environ))
    client = await aiohttp_client(app, server_kwargs={"port": port})
    await register_user(client)
    await register_user(client, "mallory@example.com")
    registered = await register_client(client, skip_consent=True)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium, args=FLAGS)
        try:
            mallory = await browser.new_context()
            hint = await id_token_in(mallory, client, registered, issuer, "mallory@example.com")
            logout_url = f"{issuer}/oauth/logout?id_token_hint={hint}"
            attack = f"<!doctype html><script>location.href = {json.dumps(logout_url)};</script>"

            async def attacker_site(route: Route) -> None:
                await route.fulfill(status=200, content_type="text/html", body=attack)

            context = await browser.new_context()  # alice's browser
            await context.route(f"{ATTACKER}/**", attacker_site)
            page = await context.new_page()
            await page.goto(f"{issuer}/ui/login?return_to=/ui/account")
            await sign_in(page, issuer, "alice@example.com")
            await page.wait_for_url(f"{issuer}/ui/account")

            await page.goto(f"{ATTACKER}/")
            await page.wait_for_url(f"{issuer}/oauth/logout?**")
            assert await page.locator("form[action='/ui/logout']").count() == 1

            await page.goto(f"{issuer}/ui/account")
            assert page.url == f"{issuer}/ui/account"
            assert "alice@example.com" in await page.content()
        finally:
            await browser.close()
