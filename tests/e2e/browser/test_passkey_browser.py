"""A real browser registers a passkey and logs in with it (issue 22;
docs/reference/mfa-and-passkeys.md).

Debian's Chromium (``/usr/bin/chromium``, installed by ``.ci/run``), driven by Playwright for
Python through ``executable_path`` (never ``playwright install``), opens a test page served by
this test on another origin than authsvc, registers a passkey through the DevTools virtual
authenticator, and logs in with it without an email (discoverable). authsvc answers the page
through ``server.cors_origins``; the relying party is ``localhost`` with the page's origin in
``webauthn.origins``. Chromium starts headless with the flags this closed network needs."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from playwright.async_api import async_playwright

from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from tests.e2e.helpers import PASSWORD, bearer, register_and_login
from tests.e2e.servers import free_port

# .ci/run installs Debian's chromium and names it here, so CI always runs this test; elsewhere
# it runs when /usr/bin/chromium exists and is skipped, with the reason, when it does not.
CHROMIUM = os.environ.get("AUTHSVC_TEST_CHROMIUM", "/usr/bin/chromium")
PAGE = Path(__file__).resolve().parents[1] / "passkey_page.html"
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip


@pytest.fixture
def deployment() -> tuple[str, str]:
    """SQLite with RS256: the browser's part does not depend on the storage."""
    return ("sqlite", "RS256")


async def test_chromium_registers_a_passkey_and_logs_in_with_it(
    aiohttp_client: Callable[..., Awaitable[TestClient]],
    base_env: dict[str, str],
    tmp_path: Path,
) -> None:
    if not Path(CHROMIUM).exists():
        if "AUTHSVC_TEST_CHROMIUM" in os.environ:
            pytest.fail(f"AUTHSVC_TEST_CHROMIUM={CHROMIUM} does not exist")
        pytest.skip("no Chromium: apt-get install chromium (or set AUTHSVC_TEST_CHROMIUM)")
    auth_port, page_port = free_port(), free_port()
    page_origin = f"http://localhost:{page_port}"
    environ = {
        **base_env,
        "AUTHSVC_AUTH__ISSUER": f"http://localhost:{auth_port}",
        "AUTHSVC_WEBAUTHN__ORIGINS": page_origin,
        "AUTHSVC_SERVER__CORS_ORIGINS": page_origin,
    }
    app = create_app(build_container(load_config(environ=environ), environ=environ))
    client = await aiohttp_client(app, server_kwargs={"port": auth_port})
    access = (await register_and_login(client))["access_token"]

    page_app = web.Application()

    async def page_handler(_: web.Request) -> web.FileResponse:
        return web.FileResponse(PAGE)

    page_app.router.add_get("/", page_handler)
    page_server = TestServer(page_app, host="localhost", port=page_port)
    await page_server.start_server()
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            try:
                context = await browser.new_context()
                page = await context.new_page()
                cdp = await context.new_cdp_session(page)
                await cdp.send("WebAuthn.enable")
                await cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
                    "protocol": "ctap2", "transport": "internal", "hasResidentKey": True,
                    "hasUserVerification": True, "isUserVerified": True,
                    "automaticPresenceSimulation": True}})  # fmt: skip
                await page.goto(page_origin + "/")
                seen: dict[str, Any] = await page.evaluate(
                    "([base, access, password]) => registerAndLogIn(base, access, password)",
                    [f"http://localhost:{auth_port}", access, PASSWORD],
                )
            finally:
                await browser.close()
    finally:
        await page_server.close()
    assert seen["registered"] == 201, seen
    assert seen["passkey"]["name"] == "chromium" and seen["passkey"]["backed_up"] is False
    assert seen["allowCredentials"] == [], "discoverable: the browser found the passkey itself"
    assert seen["login"] == 200, seen
    # The tokens the browser got are alice's, from a passkey login.
    resp = await client.get("/me", headers=bearer(seen["tokens"]["access_token"]))
    assert resp.status == 200
    me = await resp.json()
    assert me["email"] == "alice@example.com" and me["passkeys"] == 1
