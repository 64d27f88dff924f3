"""The device verification pages in a real browser (RFC 8628 §3.3; docs/reference/oauth-and-oidc.md)
at every width and language of ``tests.e2e.walk``: a device starts a request over HTTP, the user
opens ``/ui/device``, signs in, types the code, allows, and the device's next poll gets its
tokens (its first poll); a wrong code shows the form again. Each page is checked by ``Walk.check`` (axe-core, no
sideways scroll, a screenshot under ``tests/artifacts/device/``).

Debian's Chromium (``AUTHSVC_TEST_CHROMIUM``) driven by Playwright through ``executable_path``;
one browser for the module."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import attrs
import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer
from playwright.async_api import Browser, async_playwright

from domain.device import DEVICE_CODE_GRANT
from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from tests.e2e.accounts_world import shared_key_dir as shared_key_dir  # one key per module
from tests.e2e.browser.test_admin_console_browser import FLAGS, axe, chromium  # noqa: F401
from tests.e2e.helpers import PASSWORD, container_of
from tests.e2e.oidc_helpers import Registered, register_client, register_user
from tests.e2e.servers import free_port
from tests.e2e.walk import LOCALES, WIDTHS, Walk

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture
def deployment() -> tuple[str, str]:
    """SQLite with RS256: the pages do not depend on the storage (both backends are covered
    over HTTP in ``tests/e2e/http/test_device_flow.py``)."""
    return ("sqlite", "RS256")


@pytest.fixture
def base_env(base_env: dict[str, str], shared_key_dir: Path) -> dict[str, str]:
    return {**base_env, "AUTHSVC_AUTH__KEY_DIR": str(shared_key_dir)}


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def browser(chromium: str) -> AsyncIterator[Browser]:  # noqa: F811
    async with async_playwright() as pw:
        launched = await pw.chromium.launch(executable_path=chromium, args=FLAGS)
        try:
            yield launched
        finally:
            await launched.close()


async def _device_client(client: TestClient) -> Registered:
    app = await register_client(client, public=True, redirect_uris=())
    record = attrs.evolve(app.record, grant_types=(DEVICE_CODE_GRANT,))
    async with container_of(client).storage().begin() as uow:
        await uow.clients.update(record)
        await uow.commit()
    return app


async def _poll(client: TestClient, app: Registered, device_code: str) -> tuple[int, dict]:
    form = {"client_id": app.id, "grant_type": DEVICE_CODE_GRANT, "device_code": device_code}
    resp = await client.post("/oauth/token", data=form)
    return resp.status, await resp.json()


async def test_a_user_connects_a_device_at_every_width_and_language(
    base_env: dict[str, str],
    browser: Browser,
    axe: str,  # noqa: F811
) -> None:
    port = free_port()
    issuer = f"http://localhost:{port}"
    environ = {**base_env, "AUTHSVC_AUTH__ISSUER": issuer}
    app = create_app(build_container(load_config(environ=environ), environ=environ))
    async with TestClient(TestServer(app, port=port)) as client:
        await register_user(client)
        device = await _device_client(client)
        for width in WIDTHS:
            for locale in LOCALES:
                resp = await client.post(
                    "/oauth/device_authorization",
                    data={"client_id": device.id, "scope": "openid"},
                )
                started = await resp.json()
                walk = await Walk.open(
                    browser, axe, "device", folder="device", width=width, locale=locale
                )
                page = walk.page
                await page.goto(started["verification_uri"])
                await page.wait_for_url(f"{issuer}/ui/login?**")
                await walk.check("login")
                await page.fill("input[name=email]", "alice@example.com")
                await page.fill("input[name=password]", PASSWORD)
                await page.click("form[action='/ui/login'] button[type=submit]")
                await page.wait_for_url(f"{issuer}/ui/device")
                await walk.check("enter")
                await page.fill("input[name=user_code]", "ZZZZ-ZZZZ")
                await page.click("form[action='/ui/device'] button[type=submit]")
                assert await page.locator("p.error").count() == 1
                await walk.check("wrong-code")
                await page.fill("input[name=user_code]", started["user_code"].lower())
                await page.click("form[action='/ui/device'] button[type=submit]")
                assert started["user_code"] in await page.inner_text("#user-code")
                await walk.check("confirm")
                await page.click("button[name=decision][value=allow]")
                await page.wait_for_url(f"{issuer}/ui/device/done?result=approved")
                await walk.check("done")
                assert walk.console_errors == []
                await page.context.close()
                status, tokens = await _poll(client, device, started["device_code"])
                assert status == 200, tokens
                assert "id_token" in tokens
