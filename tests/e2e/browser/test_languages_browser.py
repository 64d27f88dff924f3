"""The hosted pages in both languages, both widths and both colour schemes, in Debian's
Chromium (docs/guides/languages.md): login, consent (through an app's authorization request),
logout, forgot (and its "check your email" page), reset, verify, the second step and the error
page; then the console's pages in both languages in the dark scheme. Each walk's browser sends its ``Accept-Language``; every page must be in that language
(``<html lang>`` and a known heading), pass axe-core (no serious or critical violation,
contrast included in the dark scheme), not scroll sideways, and log no script or CSP error.
Screenshots go to ``tests/artifacts/languages/``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer
from playwright.async_api import Browser, async_playwright

from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from tests.e2e.accounts_world import ROOT, make_world
from tests.e2e.accounts_world import (
    shared_key_dir as shared_key_dir,  # one RSA key per module
)
from tests.e2e.browser.test_admin_console_browser import FLAGS, axe  # noqa: F401 - fixture
from tests.e2e.helpers import PASSWORD
from tests.e2e.oidc_helpers import Registered, auth_params, pkce, register_client, register_user
from tests.e2e.servers import free_port
from tests.e2e.walk import LOCALES, WIDTHS, Walk

pytestmark = pytest.mark.asyncio(loop_scope="module")

HEADINGS = {
    "en": {"login": "Sign in", "consent": "Example App wants to access your account",
           "logout": "Sign out?", "forgot": "Forgot your password?", "sent": "Check your email",
           "reset": "Choose a new password", "verify": "Confirm your email address",
           "mfa": "Enter your code", "error": "Something is wrong with this request"},
    "de": {"login": "Anmelden", "consent": "Example App möchte auf Ihr Konto zugreifen",
           "logout": "Abmelden?", "forgot": "Passwort vergessen?", "sent": "Prüfen Sie Ihre E-Mails",
           "reset": "Wählen Sie ein neues Passwort", "verify": "Bestätigen Sie Ihre E-Mail-Adresse",
           "mfa": "Geben Sie Ihren Code ein", "error": "Mit dieser Anfrage stimmt etwas nicht"},
}  # fmt: skip
"""Each page's heading in each language: the proof the page is in the browser's language."""
GRID = [(w, loc, "light") for w in WIDTHS for loc in LOCALES] + [
    (390, "de", "dark"),
    (1280, "en", "dark"),
    (1280, "de", "dark"),
    (390, "en", "dark"),
]


@pytest.fixture
def deployment() -> tuple[str, str]:
    """SQLite with RS256: the pages' language does not depend on the storage."""
    return ("sqlite", "RS256")


@pytest.fixture
def base_env(base_env: dict[str, str], shared_key_dir: Path) -> dict[str, str]:
    return {**base_env, "AUTHSVC_AUTH__KEY_DIR": str(shared_key_dir)}


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def browser(chromium: str) -> AsyncIterator[Browser]:
    async with async_playwright() as pw:
        launched = await pw.chromium.launch(executable_path=chromium, args=FLAGS)
        try:
            yield launched
        finally:
            await launched.close()


async def _walk(browser: Browser, axe_js: str, base: str, app: Registered, width: int, locale: str,
                scheme: str) -> None:  # fmt: skip
    walk = await Walk.open(browser, axe_js, f"pages-{scheme}", folder="languages", width=width,
                           locale=locale)  # fmt: skip
    page = walk.page
    await page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
    headings = HEADINGS[locale]

    async def shows(name: str) -> None:
        assert await page.get_attribute("html", "lang") == locale, page.url
        assert (await page.inner_text("h1")).strip() == headings[name], page.url
        await walk.check(name)

    _, challenge = pkce()
    await page.goto(f"{base}/oauth/authorize?{urlencode(auth_params(app, challenge))}")
    await page.wait_for_url(f"{base}/ui/login?**")
    await shows("login")
    await page.fill("input[name=email]", "alice@example.com")
    await page.fill("input[name=password]", PASSWORD)
    await page.click("form[action='/ui/login'] button[type=submit]")
    await page.wait_for_url(f"{base}/ui/consent?**")
    await shows("consent")
    for name, path in (("logout", "/ui/logout"), ("forgot", "/ui/forgot"),
                       ("sent", "/ui/forgot/sent"), ("reset", "/ui/reset?token=abc"),
                       ("verify", "/ui/verify?token=abc"), ("mfa", "/ui/login/mfa"),
                       ("error", "/ui/consent")):  # fmt: skip
        await page.goto(f"{base}{path}")
        await shows(name)
    assert walk.console_errors == []
    await page.context.close()


async def test_every_hosted_page_in_both_languages_widths_and_schemes(
    base_env: dict[str, str],
    browser: Browser,
    axe: str,  # noqa: F811
) -> None:
    port = free_port()
    base = f"http://localhost:{port}"
    environ = {**base_env, "AUTHSVC_AUTH__ISSUER": base}
    app = create_app(build_container(load_config(environ=environ), environ=environ))
    async with TestClient(TestServer(app, port=port)) as client:
        await register_user(client)
        registered = await register_client(client)
        for width, locale, scheme in GRID:
            await _walk(browser, axe, base, registered, width, locale, scheme)


CONSOLE = {
    "en": (
        "Dashboard",
        "Users",
        "Invitations",
        "Groups",
        "OAuth clients",
        "Identity providers",
        "Audit log",
    ),
    "de": (
        "Übersicht",
        "Benutzer",
        "Einladungen",
        "Gruppen",
        "OAuth-Clients",
        "Identitätsanbieter",
        "Audit-Protokoll",
    ),
}
"""The console's navigation in each language."""


async def test_the_console_in_both_languages_in_the_dark_scheme(
    base_env: dict[str, str],
    browser: Browser,
    axe: str,  # noqa: F811
) -> None:
    port = free_port()
    base = f"http://localhost:{port}"
    environ = {**base_env, "AUTHSVC_AUTH__ISSUER": base}
    app = create_app(build_container(load_config(environ=environ), environ=environ))
    async with TestClient(TestServer(app, port=port)) as client:
        world = await make_world(client)
        home = world.orgs["same"]
        paths = ("/ui/admin", "/ui/admin/users", f"/ui/admin/users/{home.target}",
                 "/ui/admin/invitations",
                 "/ui/admin/groups", f"/ui/admin/groups/{home.group}", "/ui/admin/clients",
                 f"/ui/admin/clients/{home.oauth_client}", "/ui/admin/providers",
                 "/ui/admin/audit")  # fmt: skip
        for locale in LOCALES:
            walk = await Walk.open(browser, axe, "console-dark", folder="languages", locale=locale)
            page = walk.page
            await page.emulate_media(color_scheme="dark")
            await page.goto(f"{base}/ui/login?return_to=/ui/admin")
            await page.fill("input[name=email]", ROOT)
            await page.fill("input[name=password]", PASSWORD)
            await page.click("form[action='/ui/login'] button[type=submit]")
            await page.wait_for_url(f"{base}/ui/admin")
            for number, path in enumerate(paths):
                await page.goto(f"{base}{path}")
                assert await page.get_attribute("html", "lang") == locale, path
                nav = await page.locator(".bar nav a").all_inner_texts()  # not the presets'
                assert tuple(text.strip() for text in nav) == CONSOLE[locale], path
                await walk.check(
                    f"{number}-{path.split('/')[3] if path.count('/') > 2 else 'home'}"
                )
            assert walk.console_errors == []
            await page.context.close()
