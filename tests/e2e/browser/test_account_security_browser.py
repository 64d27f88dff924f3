"""The account page's security actions in Debian's Chromium (docs/reference/accounts.md, "The
account page: security"), at each of ``WIDTHS`` × ``LOCALES``: one walk signs in, is sent to
the re-authentication page once its login is stale, changes the password, turns TOTP on (the
code computed with pyotp from the key the page shows), makes new recovery codes, turns TOTP
off, adds a passkey with Chromium's virtual authenticator and renames it, confirms a stale login
with it, changes the email by the mailed link, removes the passkey and deletes the account. ``walk.check`` at each page (axe-core, no
sideways scroll, a screenshot under ``tests/artifacts/account-security/``); each outcome is
checked over the JSON API; a second stale login is confirmed with the passkey. No script or
CSP error on any page."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyotp
import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer
from dependency_injector import providers
from playwright.async_api import Browser, async_playwright

from application.ports import EmailMessage
from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from entrypoints.http.keys import CONTAINER
from tests.e2e.accounts_world import shared_key_dir as shared_key_dir  # one RSA key
from tests.e2e.helpers import PASSWORD, bearer
from tests.e2e.servers import free_port
from tests.e2e.walk import LOCALES, WIDTHS, Walk
from tests.fakes import FakeClock

CHROMIUM = os.environ.get("AUTHSVC_TEST_CHROMIUM")
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update",
         "--disable-sync"]  # fmt: skip
NEW_PASSWORD = "a brand new passphrase"
WINDOW = 300

pytestmark = pytest.mark.asyncio(loop_scope="module")  # one browser for the module's walks


@pytest.fixture
def deployment() -> tuple[str, str]:
    """SQLite with RS256: the pages do not depend on the storage (both are proven over HTTP in
    ``tests/e2e/http/test_account_security_http.py``)."""
    return ("sqlite", "RS256")


@pytest.fixture
def base_env(base_env: dict[str, str], shared_key_dir: Path) -> dict[str, str]:
    return {**base_env, "AUTHSVC_AUTH__KEY_DIR": str(shared_key_dir)}


@pytest.fixture(scope="module")
def chromium() -> str:
    if CHROMIUM is None:
        pytest.skip("AUTHSVC_TEST_CHROMIUM is not set (e.g. /usr/bin/chromium, Debian's chromium)")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"AUTHSVC_TEST_CHROMIUM={CHROMIUM} does not exist")
    return CHROMIUM


@pytest.fixture(scope="module")
def axe(node_modules: Path) -> str:
    return (node_modules / "node_modules" / "axe-core" / "axe.min.js").read_text("utf-8")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def browser(chromium: str) -> AsyncIterator[Browser]:
    async with async_playwright() as pw:
        launched = await pw.chromium.launch(executable_path=chromium, args=FLAGS)
        try:
            yield launched
        finally:
            await launched.close()


async def _json(client: TestClient, method: str, path: str, token: str) -> object:
    resp = await client.request(method, path, headers=bearer(token))
    assert resp.status == 200, await resp.text()
    return await resp.json()


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("width", WIDTHS)
async def test_every_security_action_in_chromium(
    base_env: dict[str, str], browser: Browser, axe: str, width: int, locale: str
) -> None:
    port = free_port()
    base = f"http://localhost:{port}"
    environ = {**base_env, "AUTHSVC_AUTH__ISSUER": base}
    app = create_app(build_container(load_config(environ=environ), environ=environ))
    container = app[CONTAINER]
    clock = FakeClock(datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=WINDOW + 60))
    container.clock.override(providers.Object(clock))
    mails: list[EmailMessage] = []
    container.outbox().post = lambda message, _user: mails.append(message)  # type: ignore[method-assign]
    async with TestClient(TestServer(app, port=port)) as client:
        resp = await client.post("/register", json={"email": "alice@example.com",
                                                    "password": PASSWORD})  # fmt: skip
        assert resp.status == 201
        walk = await Walk.open(browser, axe, "account", folder="account-security", width=width,
                               locale=locale)  # fmt: skip
        page = walk.page
        try:
            # Sign in; the login becomes stale: the password page asks to confirm first.
            await page.goto(f"{base}/ui/account")
            await page.fill("input[name=email]", "alice@example.com")
            await page.fill("input[name=password]", PASSWORD)
            await page.click("form[action='/ui/login'] button[type=submit]")
            await page.wait_for_url(f"{base}/ui/account")
            await walk.check("account")
            clock.advance(WINDOW + 60)  # the present: the login is 360 s old
            token = (await (await client.post("/login", json={
                "email": "alice@example.com", "password": PASSWORD})).json())["access_token"]  # fmt: skip
            await page.click("#security >> a[href='/ui/account/password']")
            await page.wait_for_url(f"{base}/ui/account/reauthenticate?**")
            await walk.check("reauthenticate")
            await page.fill("#password", PASSWORD)
            await page.click("form[action='/ui/account/reauthenticate'] button")

            # The password.
            await page.wait_for_url(f"{base}/ui/account/password")
            await walk.check("password")
            await page.fill("#old_password", PASSWORD)
            await page.fill("#new_password", NEW_PASSWORD)
            await page.fill("#new_password_again", NEW_PASSWORD)
            await page.click("form[action='/ui/account/password'] button")
            await page.wait_for_url(f"{base}/ui/account/done?action=password")
            await walk.check("password-done")
            resp = await client.post("/login", json={"email": "alice@example.com",
                                                     "password": NEW_PASSWORD})  # fmt: skip
            assert resp.status == 200
            token = (await resp.json())["access_token"]

            # TOTP on (pyotp computes the code from the key shown), new codes, off.
            await page.goto(f"{base}/ui/account/totp")
            await walk.check("totp-off")
            await page.click("form[action='/ui/account/totp'] button")
            await page.wait_for_selector(".qr svg")
            await walk.check("totp-setup")
            secret = (await page.text_content("#secret") or "").strip()
            await page.fill("#code", pyotp.TOTP(secret).at(clock.now()))
            await page.click("form[action='/ui/account/totp/confirm'] button")
            await page.wait_for_selector("#recovery-codes")
            assert await page.locator("#recovery-codes li").count() == 10
            await walk.check("recovery-codes")
            assert (await _json(client, "GET", "/me", token))["mfa_enabled"] is True  # type: ignore[index]
            await page.goto(f"{base}/ui/account/totp")
            await walk.check("totp-on")
            await page.click("form[action='/ui/account/totp/recovery-codes'] button")
            await page.wait_for_selector("#recovery-codes")
            await page.goto(f"{base}/ui/account/totp")
            await page.fill("#password", NEW_PASSWORD)
            await page.click("form[action='/ui/account/totp/disable'] button")
            await page.wait_for_url(f"{base}/ui/account/done?action=mfa-off")
            assert (await _json(client, "GET", "/me", token))["mfa_enabled"] is False  # type: ignore[index]

            # A passkey: added with the virtual authenticator, renamed, removed.
            cdp = await page.context.new_cdp_session(page)
            await cdp.send("WebAuthn.enable")
            await cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
                "protocol": "ctap2", "transport": "internal", "hasResidentKey": True,
                "hasUserVerification": True, "isUserVerified": True,
                "automaticPresenceSimulation": True}})  # fmt: skip
            await page.goto(f"{base}/ui/account/passkeys")
            await walk.check("passkeys-empty")
            await page.fill("#passkey-name", "laptop")
            await page.click("#passkey-add")
            await page.wait_for_selector("#passkeys")
            await walk.check("passkeys")
            listed = await _json(client, "GET", "/me/passkeys", token)
            assert [p["name"] for p in listed["items"]] == ["laptop"]  # type: ignore[index]
            await page.fill("#name-1", "work laptop")
            await page.click("form[action='/ui/account/passkeys/rename'] button")
            await page.wait_for_url(f"{base}/ui/account/done?action=passkey-renamed")
            listed = await _json(client, "GET", "/me/passkeys", token)
            assert [p["name"] for p in listed["items"]] == ["work laptop"]  # type: ignore[index]
            # The login gets stale again: the passkey confirms who it is this time.
            clock.advance(WINDOW + 1)
            await page.goto(f"{base}/ui/account/email")
            await page.wait_for_url(f"{base}/ui/account/reauthenticate?**")
            await walk.check("reauthenticate-passkey")
            await page.click("#passkey-reauth")

            # The email: the form, "check your new address", the mailed link's page.
            await page.wait_for_url(f"{base}/ui/account/email")
            await walk.check("email")
            await page.fill("#new_email", "alice@new.example")
            await page.fill("#password", NEW_PASSWORD)
            await page.click("form[action='/ui/account/email'] button")
            await page.wait_for_url(f"{base}/ui/account/email/sent")
            await walk.check("email-sent")
            link = [m for m in mails if m.kind == "email_change"][-1].link
            await page.goto(link)
            await walk.check("email-confirm")
            await page.click("form[action='/ui/account/email/confirm'] button")
            await page.wait_for_url(f"{base}/ui/account/email/changed")
            await walk.check("email-changed")
            me = await _json(client, "GET", "/me", token)
            assert (me["email"], me["email_verified"]) == ("alice@new.example", True)  # type: ignore[index]

            await page.goto(f"{base}/ui/account/passkeys")
            await page.fill("#password-1", NEW_PASSWORD)
            await page.click("form[action='/ui/account/passkeys/remove'] button")
            await page.wait_for_url(f"{base}/ui/account/done?action=passkey-removed")
            assert (await _json(client, "GET", "/me", token))["passkeys"] == 0  # type: ignore[index]

            # Delete the account: the confirmation page, then goodbye.
            await page.goto(f"{base}/ui/account/delete")
            await walk.check("delete")
            await page.fill("#password", NEW_PASSWORD)
            await page.click("form[action='/ui/account/delete'] button")
            await page.wait_for_url(f"{base}/ui/account/deleted")
            await walk.check("deleted")
            resp = await client.get("/me", headers=bearer(token))
            assert resp.status == 401
            assert walk.console_errors == [], walk.console_errors
        finally:
            await page.context.close()
            container.clock.reset_override()
