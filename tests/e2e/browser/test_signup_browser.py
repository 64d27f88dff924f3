"""Sign-up in a real browser (docs/guides/self-service.md; ADR 0042): Debian's Chromium
(``AUTHSVC_TEST_CHROMIUM``) driven by Playwright through ``executable_path``, one browser for
the module, at each width of ``WIDTHS`` and each language of ``LOCALES``
(``tests.e2e.walk``).

Each walk, with ``auth.require_verified_email`` on and mail going to a real SMTP server
(aiosmtpd, ``tests.smtp``): the login page → its "Create account" link → the sign-up form
(posted once with two different passwords: the form again, the email kept) → the "check your
email" page → the verification link taken from the mail and opened in the same browser → its
Confirm button → the account page, signed in. Every page passes ``Walk.check`` (axe-core, no
sideways scroll, a screenshot under ``tests/artifacts/signup/``); no script or CSP error.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path

import attrs
import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer
from aiosmtpd.controller import Controller
from playwright.async_api import Browser, async_playwright

from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from tests.e2e.accounts_world import (
    shared_key_dir as shared_key_dir,  # one RSA key per module
)
from tests.e2e.helpers import PASSWORD
from tests.e2e.servers import free_port
from tests.e2e.walk import LOCALES, WIDTHS, Walk
from tests.smtp import SmtpSink, smtp_env, text_of

CHROMIUM = os.environ.get("AUTHSVC_TEST_CHROMIUM")
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update",
         "--disable-sync"]  # fmt: skip
_LINK = re.compile(r"https?://\S+/ui/verify\?token=[A-Za-z0-9_-]+")

pytestmark = pytest.mark.asyncio(loop_scope="module")  # one browser for the module's tests


@attrs.frozen
class Served:
    """The app under test at ``base``, its client, and the SMTP sink its mail reaches."""

    client: TestClient
    base: str
    sink: SmtpSink


@pytest.fixture
def deployment() -> tuple[str, str]:
    """SQLite with RS256: the browser's part does not depend on the storage (both are proven
    over HTTP in ``tests/e2e/http/test_signup_pages.py``)."""
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
    """axe-core's script, from the lockfile's install."""
    return (node_modules / "node_modules" / "axe-core" / "axe.min.js").read_text("utf-8")


@pytest_asyncio.fixture(loop_scope="module")
async def served(base_env: dict[str, str]) -> AsyncIterator[Served]:
    """A fresh app requiring verified emails, its mail going to a fresh SMTP sink."""
    sink = SmtpSink()
    smtp_port = free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=smtp_port)
    await asyncio.to_thread(controller.start)
    port = free_port()
    base = f"http://localhost:{port}"
    environ = {**base_env, **smtp_env(smtp_port), "AUTHSVC_AUTH__ISSUER": base,
               "AUTHSVC_AUTH__REQUIRE_VERIFIED_EMAIL": "true"}  # fmt: skip
    app = create_app(build_container(load_config(environ=environ), environ=environ))
    try:
        async with TestClient(TestServer(app, port=port)) as client:
            yield Served(client, base, sink)
    finally:
        await asyncio.to_thread(controller.stop)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def browser(chromium: str) -> AsyncIterator[Browser]:
    async with async_playwright() as pw:
        launched = await pw.chromium.launch(executable_path=chromium, args=FLAGS)
        try:
            yield launched
        finally:
            await launched.close()


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("width", WIDTHS)
async def test_sign_up_check_mail_verify_and_land_signed_in(
    served: Served, browser: Browser, axe: str, width: int, locale: str
) -> None:
    email = f"new-{locale}-{width}@example.com"
    walk = await Walk.open(browser, axe, "signup", folder="signup", width=width, locale=locale)
    page = walk.page
    try:
        await page.goto(f"{served.base}/ui/login?return_to=/ui/account")
        await walk.check("login")
        await page.click("a[href^='/ui/register?']")
        await page.wait_for_url(f"{served.base}/ui/register?return_to=%2Fui%2Faccount")
        await walk.check("register")
        assert await page.get_attribute("#password", "minlength") == "8"

        await page.fill("#email", email)
        await page.fill("#password", PASSWORD)
        await page.fill("#password_again", PASSWORD + "!")
        await page.click("form[action='/ui/register'] button[type=submit]")
        await page.wait_for_selector("p.error[role=alert]")
        assert await page.input_value("#email") == email
        assert await page.input_value("#password") == ""
        await walk.check("register-error")

        await page.fill("#password", PASSWORD)
        await page.fill("#password_again", PASSWORD)
        await page.click("form[action='/ui/register'] button[type=submit]")
        await page.wait_for_url(f"{served.base}/ui/register/check-mail")
        await walk.check("check-mail")

        link = _LINK.search(text_of(await served.sink.wait_for(email)))
        assert link is not None
        await page.goto(link.group(0))
        await walk.check("verify")
        await page.click("form[action='/ui/verify'] button[type=submit]")
        await page.wait_for_url(f"{served.base}/ui/account")
        assert email in await page.content()
        await walk.check("account")
        assert walk.console_errors == []
    finally:
        await page.context.close()
