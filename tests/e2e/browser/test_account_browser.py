"""The account pages in a real browser (docs/reference/accounts.md, "The account pages"; the guide
docs/guides/self-service.md): Debian's Chromium (``AUTHSVC_TEST_CHROMIUM``) driven by Playwright
through ``executable_path``, one browser for the module, one context per walk, at each of
``WIDTHS`` × ``LOCALES``.

Each walk: an app's authorization request in the browser (sign in, allow on the consent page,
back to the app: a consent and a session of that app), two more sessions over the JSON API
(an iPhone's and a Firefox's). On the pages, by clicks only: the overview's "Send the
verification link again" (a second message reaches the SMTP sink), the sessions page (devices
named, this session marked) — end the iPhone's session —, the connected apps page — revoke the
app —, then "End all other sessions". Each action is checked over the JSON API (/me/sessions,
/me/consents, the app's refresh token) and every page passes ``Walk.check`` (axe-core, no
sideways scroll at 390 px, a screenshot in ``tests/artifacts/account/``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer
from aiosmtpd.controller import Controller
from playwright.async_api import Browser, Route, async_playwright

from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from tests.e2e.accounts_world import shared_key_dir as shared_key_dir  # one key per module
from tests.e2e.browser.test_admin_console_browser import FLAGS, axe, chromium  # noqa: F401
from tests.e2e.helpers import PASSWORD, bearer
from tests.e2e.oidc_helpers import (
    REDIRECT,
    auth_params,
    exchange,
    pkce,
    query_of,
    refresh,
    register_client,
    register_user,
)
from tests.e2e.servers import free_port
from tests.e2e.walk import LOCALES, WIDTHS, Walk
from tests.smtp import SmtpSink, smtp_env

pytestmark = pytest.mark.asyncio(loop_scope="module")  # one browser for the module's walks

IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
          "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1")  # fmt: skip
FIREFOX = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0"
APP_NAME = "Photo Printer"


@pytest.fixture
def deployment() -> tuple[str, str]:
    """SQLite with RS256: the pages do not depend on the storage (both backends are walked
    over HTTP in ``tests/e2e/http/test_account_pages.py``)."""
    return ("sqlite", "RS256")


@pytest.fixture(scope="module")
def mail_sink() -> Iterator[tuple[SmtpSink, int]]:
    """One SMTP sink (aiosmtpd on its own thread) for the module's walks: ``(sink, port)``."""
    sink, port = SmtpSink(), free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield sink, port
    finally:
        controller.stop()


@pytest.fixture
def base_env(
    base_env: dict[str, str], shared_key_dir: Path, mail_sink: tuple[SmtpSink, int]
) -> dict[str, str]:
    """conftest's environment with the module's one key directory, mail to the sink."""
    return {**base_env, "AUTHSVC_AUTH__KEY_DIR": str(shared_key_dir), **smtp_env(mail_sink[1])}


@pytest_asyncio.fixture(loop_scope="module")
async def served(base_env: dict[str, str]) -> AsyncIterator[tuple[TestClient, str]]:
    """A fresh app for each walk, served in the module's event loop: ``(client, base URL)``."""
    port = free_port()
    base = f"http://localhost:{port}"
    environ = {**base_env, "AUTHSVC_AUTH__ISSUER": base}
    app = create_app(build_container(load_config(environ=environ), environ=environ))
    async with TestClient(TestServer(app, port=port)) as client:
        yield client, base


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def browser(chromium: str) -> AsyncIterator[Browser]:  # noqa: F811
    async with async_playwright() as pw:
        launched = await pw.chromium.launch(executable_path=chromium, args=FLAGS)
        try:
            yield launched
        finally:
            await launched.close()


async def _api_login(client: TestClient, email: str, agent: str) -> dict[str, Any]:
    resp = await client.post("/login", json={"email": email, "password": PASSWORD},
                             headers={"User-Agent": agent})  # fmt: skip
    assert resp.status == 200, await resp.text()
    return await resp.json()  # type: ignore[no-any-return]


async def _api(client: TestClient, path: str, access: str) -> list[dict[str, Any]]:
    resp = await client.get(path, headers=bearer(access))
    assert resp.status == 200, await resp.text()
    return (await resp.json())["items"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("width", WIDTHS)
async def test_sessions_apps_and_verification_on_the_account_pages(
    served: tuple[TestClient, str], browser: Browser, axe: str,  # noqa: F811
    mail_sink: tuple[SmtpSink, int], width: int, locale: str,
) -> None:  # fmt: skip
    client, base = served
    sink = mail_sink[0]
    email = f"walker-{locale}-{width}@example.com"
    await register_user(client, email)
    await sink.wait_for(email)  # the registration's verification mail
    app = await register_client(client, name=APP_NAME)
    walk = await Walk.open(browser, axe, "account", folder="account", width=width, locale=locale)
    page = walk.page

    # an app's authorization request: sign in, allow, back at the app with a code
    codes: list[str] = []

    async def callback(route: Route) -> None:
        codes.append(query_of(route.request.url)["code"])
        await route.fulfill(status=200, content_type="text/plain", body="back at the app")

    await page.context.route(f"{REDIRECT}*", callback)
    verifier, challenge = pkce()
    params = auth_params(app, challenge, scope="openid email offline_access")
    await page.goto(f"{base}/oauth/authorize?{urlencode(params)}")
    await page.wait_for_url(f"{base}/ui/login?**")
    await page.fill("input[name=email]", email)
    await page.fill("input[name=password]", PASSWORD)
    await page.click("form[action='/ui/login'] button[type=submit]")
    await page.wait_for_url(f"{base}/ui/consent?**")
    await page.click("button[value=allow]")
    await page.wait_for_url(f"{REDIRECT}?**")
    tokens = await (await exchange(client, app, codes[0], verifier)).json()
    phone = await _api_login(client, email, IPHONE)
    laptop = await _api_login(client, email, FIREFOX)

    # the overview: resend the verification mail
    await page.goto(f"{base}/ui/account")
    await walk.check("overview")
    await page.click("#resend-verification")
    await page.wait_for_url(f"{base}/ui/account?done=verification_sent")
    await sink.wait_for(email, count=2)
    await walk.check("verification-sent")

    # sessions: four (this browser's, the app's, the iPhone's, the Firefox's); end the iPhone's
    await page.click(".account-nav a[href='/ui/account/sessions']")
    await page.wait_for_url(f"{base}/ui/account/sessions")
    listed = await _api(client, "/me/sessions", laptop["access_token"])
    assert len(listed) == 4
    phone_id = next(s["id"] for s in listed if s["user_agent"] == IPHONE)
    assert await page.locator("#sessions > li").count() == 4
    assert await page.locator("#sessions > li.current").count() == 1
    assert await page.locator("#sessions > li.current form").count() == 0  # no "end" here
    phone_item = page.locator(f"#sessions > li[data-session='{phone_id}']")
    assert "Mobile Safari 17 on iOS (iPhone)" in await phone_item.inner_text()
    assert await page.locator(f"#sessions > li:has-text('{APP_NAME}')").count() == 1
    await walk.check("sessions")
    await phone_item.locator("button").click()
    await page.wait_for_url(f"{base}/ui/account/sessions?done=ended")
    await walk.check("session-ended")
    remaining = {s["id"] for s in await _api(client, "/me/sessions", laptop["access_token"])}
    assert phone_id not in remaining and len(remaining) == 3
    assert (await client.post("/refresh", json={"refresh_token": phone["refresh_token"]})
            ).status == 401  # fmt: skip

    # connected apps: the app, revoked (its refresh token ends with its consent)
    await page.click(".account-nav a[href='/ui/account/apps']")
    await page.wait_for_url(f"{base}/ui/account/apps")
    assert await page.locator(f"#apps > li[data-client='{app.id}']").count() == 1
    await walk.check("apps")
    await page.click(f"#apps > li[data-client='{app.id}'] button")
    await page.wait_for_url(f"{base}/ui/account/apps?done=revoked")
    assert await page.locator("#apps > li").count() == 0
    await walk.check("app-revoked")
    assert await _api(client, "/me/consents", laptop["access_token"]) == []
    assert (await refresh(client, app, tokens["refresh_token"])).status == 400

    # end all other sessions: the Firefox's ends, this browser stays signed in
    await page.click(".account-nav a[href='/ui/account/sessions']")
    await page.click("#end-others")
    await page.wait_for_url(f"{base}/ui/account/sessions?done=others_ended")
    assert await page.locator("#sessions > li").count() == 1
    assert await page.locator("#only-session").count() == 1
    await walk.check("others-ended")
    resp = await client.get("/me/sessions", headers=bearer(laptop["access_token"]))
    assert resp.status == 200  # its access token lives out its short lifetime
    assert len((await resp.json())["items"]) == 1
    assert (await client.post("/refresh", json={"refresh_token": laptop["refresh_token"]})
            ).status == 401  # fmt: skip
    assert walk.console_errors == [], walk.console_errors
    await page.context.close()
