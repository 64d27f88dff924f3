"""Invitations in a real browser (docs/reference/invitations.md, docs/reference/console.md):
Debian's Chromium (``AUTHSVC_TEST_CHROMIUM``) driven by Playwright through ``executable_path``,
one browser for the module, ``tests.e2e.walk.Walk`` at every page (axe-core: no serious or
critical violation; no sideways scroll; a screenshot under ``tests/artifacts/invitations/``) at
``WIDTHS`` × ``LOCALES``.

For each width and language: an org_admin signs in, fills "Invite a user" on the console's
users page (an email, the operator role, one group of its organization), lands on the
invitations list; the mail arrives at the SMTP sink (``tests.smtp``); the invitee opens the
link in another browser context, sees the organization and the email, sets a password and lands
signed in on /ui/account; the JSON API shows the account with the role, organization and group.
The used link, a link revoked from the console and an expired link each show the "not valid"
page and create nothing; a resent invitation's old link too. And one federated acceptance:
"Continue with TestIdP" on the invitation page, panva ``oidc-provider`` as the upstream
(``tests.e2e.federation_helpers.upstream_process``), back on /ui/account with the identity.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer
from playwright.async_api import Browser, async_playwright

from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from tests.e2e.accounts_world import HOME, World, log_in_as, login, make_world
from tests.e2e.accounts_world import shared_key_dir as shared_key_dir  # one key per module
from tests.e2e.federation_helpers import provider_toml, upstream_process
from tests.e2e.helpers import PASSWORD, bearer, container_of
from tests.e2e.servers import free_port
from tests.e2e.walk import LOCALES, WIDTHS, Walk
from tests.interop.driver import DevInteractions
from tests.smtp import SmtpSink, smtp_env, smtp_server, token_of

__all__ = ["smtp_server"]  # the fixture, for pytest

CHROMIUM = os.environ.get("AUTHSVC_TEST_CHROMIUM")
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update",
         "--disable-sync"]  # fmt: skip
NEW_PASSWORD = "a long enough passphrase"
FOLDER = "invitations"

pytestmark = pytest.mark.asyncio(loop_scope="module")  # one browser for the module's tests


@pytest.fixture
def deployment() -> tuple[str, str]:
    """SQLite with RS256: the browser's part does not depend on the storage."""
    return ("sqlite", "RS256")


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


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def browser(chromium: str) -> AsyncIterator[Browser]:
    """One Chromium for the module (each person walks in its own context)."""
    async with async_playwright() as pw:
        launched = await pw.chromium.launch(executable_path=chromium, args=FLAGS)
        try:
            yield launched
        finally:
            await launched.close()


@pytest_asyncio.fixture(loop_scope="module")
async def served(
    base_env: dict[str, str], shared_key_dir: Path, smtp_server: tuple[SmtpSink, int]
) -> AsyncIterator[tuple[TestClient, World, str, SmtpSink]]:
    """A fresh app mailing to the SMTP sink, on a real port (its issuer), with the accounts
    world: ``(client, world, base, sink)``."""
    sink, smtp_port = smtp_server
    port = free_port()
    base = f"http://localhost:{port}"
    environ = {**base_env, **smtp_env(smtp_port), "AUTHSVC_AUTH__KEY_DIR": str(shared_key_dir),
               "AUTHSVC_AUTH__ISSUER": base}  # fmt: skip
    app = create_app(build_container(load_config(environ=environ), environ=environ))
    async with TestClient(TestServer(app, port=port)) as client:
        yield client, await make_world(client), base, sink


async def _sign_in_admin(walk: Walk, base: str, email: str) -> None:
    page = walk.page
    await page.goto(f"{base}/ui/admin/users")
    assert page.url.startswith(f"{base}/ui/login?return_to="), page.url
    await page.fill("input[name=email]", email)
    await page.fill("input[name=password]", PASSWORD)
    await page.click("form[action='/ui/login'] button[type=submit]")
    await page.wait_for_url(f"{base}/ui/admin/users")


async def _accept(walk: Walk, link: str, shot: str) -> None:
    page = walk.page
    await page.goto(link)
    await walk.check(f"{shot}-invitation")
    await page.fill("#password", NEW_PASSWORD)
    await page.fill("#password_again", NEW_PASSWORD)
    await page.click("form[action='/ui/invitation'] button[type=submit]")


async def _refused(walk: Walk, link: str, shot: str) -> None:
    resp = await walk.page.goto(link)
    assert resp is not None and resp.status == 400
    assert await walk.page.locator("#password").count() == 0
    await walk.check(shot)


async def test_invite_from_the_console_accept_in_the_browser_at_every_width_and_language(
    served: tuple[TestClient, World, str, SmtpSink], browser: Browser, axe: str
) -> None:
    client, world, base, sink = served
    await log_in_as(world, "org_admin")
    group = world.orgs["same"].group
    for width in WIDTHS:
        for locale in LOCALES:
            invitee = f"new-{locale}-{width}@example.com"
            admin = await Walk.open(browser, axe, "admin", folder=FOLDER, width=width,
                                    locale=locale)  # fmt: skip
            await _sign_in_admin(admin, base, f"org_admin@{HOME}.example")
            await admin.check("users-with-invite-form")
            await admin.page.fill("#invite-email", invitee)
            await admin.page.select_option("#invite-role", "operator")
            await admin.page.check(f"input[name='group:{group}']")
            await admin.page.click("form[action='/ui/admin/invitations'] button[type=submit]")
            await admin.page.wait_for_url(f"{base}/ui/admin/invitations?done=invited")
            row = admin.page.locator("#invitations tr", has_text=invitee)
            assert "pending" in await row.inner_text()
            await admin.check("invitations")

            link = f"{base}/ui/invitation?token={token_of(await sink.wait_for(invitee))}"
            person = await Walk.open(browser, axe, "invitee", folder=FOLDER, width=width,
                                     locale=locale)  # fmt: skip
            await _accept(person, link, "accept")
            await person.page.wait_for_url(f"{base}/ui/account")
            assert invitee in await person.page.locator("body").inner_text()
            await person.check("account")
            await _refused(person, link, "used-link")

            pair = await login(client, invitee, NEW_PASSWORD)
            me = await (await client.get("/me", headers=bearer(pair["access_token"]))).json()
            assert (me["role"], me["org_id"], me["groups"], me["email_verified"]) == (
                "operator", HOME, [group], True)  # fmt: skip
            await admin.page.reload()
            assert "accepted" in await row.inner_text()
            assert admin.console_errors == [] and person.console_errors == []
            await admin.page.context.close()
            await person.page.context.close()


async def test_revoked_resent_and_expired_links_are_refused_in_the_browser(
    served: tuple[TestClient, World, str, SmtpSink], browser: Browser, axe: str
) -> None:
    client, world, base, sink = served
    await log_in_as(world, "org_admin")
    admin = await Walk.open(browser, axe, "admin-revoke", folder=FOLDER, width=390)
    await _sign_in_admin(admin, base, f"org_admin@{HOME}.example")
    links = {}
    for who in ("revoked", "resent", "expired"):
        email = f"{who}@example.com"
        await admin.page.goto(f"{base}/ui/admin/invitations")
        await admin.page.fill("#invite-email", email)
        await admin.page.click("form[action='/ui/admin/invitations'] button[type=submit]")
        await admin.page.wait_for_url(f"{base}/ui/admin/invitations?done=invited")
        links[who] = f"{base}/ui/invitation?token={token_of(await sink.wait_for(email))}"
    await admin.page.get_by_role("button", name="Revoke the invitation of revoked@example.com"
                                 ).click()  # fmt: skip
    await admin.page.wait_for_url(f"{base}/ui/admin/invitations?done=revoked")
    await admin.page.get_by_role("button", name="Resend the invitation of resent@example.com"
                                 ).click()  # fmt: skip
    await admin.page.wait_for_url(f"{base}/ui/admin/invitations?done=resent")
    await admin.check("after-revoke-and-resend")
    async with container_of(client).storage().begin() as uow:  # a week passes for "expired"
        page = await uow.invitations.list_page(None, None, 10)
        late = next(i for i in page if i.email == "expired@example.com")
        await uow.invitations.renew(late.id, late.token_hash, late.created_at - timedelta(1),
                                    late.invited_by)  # fmt: skip
        await uow.commit()
    person = await Walk.open(browser, axe, "invitee-refused", folder=FOLDER, width=390,
                             locale="de")  # fmt: skip
    for who, link in links.items():
        await _refused(person, link, f"{who}-link")
    fresh = f"{base}/ui/invitation?token={token_of(await sink.wait_for('resent@example.com', 2))}"
    await _accept(person, fresh, "resent")
    await person.page.wait_for_url(f"{base}/ui/account")
    users = await (await client.get("/users", headers=bearer(world.tokens["superadmin"]),
                                    params={"limit": "200"})).json()  # fmt: skip
    emails = {u["email"] for u in users["items"]}
    assert "resent@example.com" in emails
    assert not emails & {"revoked@example.com", "expired@example.com"}


async def test_a_federated_acceptance_in_the_browser(
    base_env: dict[str, str], shared_key_dir: Path, smtp_server: tuple[SmtpSink, int],
    node_modules: Path, tmp_path: Path, browser: Browser, axe: str,
) -> None:  # fmt: skip
    """The invitee clicks "Continue with TestIdP" on the invitation page, signs in at panva
    oidc-provider (devInteractions) and lands signed in on /ui/account with the identity
    linked; the account has the invitation's role, organization and group (JSON API)."""
    sink, smtp_port = smtp_server
    port = free_port()
    base = f"http://localhost:{port}"
    with upstream_process(node_modules, f"{base}/federation/test/callback") as up:
        config = tmp_path / "authsvc.toml"
        config.write_text(provider_toml(up))
        environ = {**base_env, **smtp_env(smtp_port), "AUTHSVC_AUTH__ISSUER": base,
                   "AUTHSVC_AUTH__KEY_DIR": str(shared_key_dir)}  # fmt: skip
        loaded = load_config(str(config), environ=environ)
        app = create_app(build_container(loaded, config_path=str(config), environ=environ))
        async with TestClient(TestServer(app, port=port)) as client:
            world = await make_world(client)
            admin = await log_in_as(world, "org_admin")
            group = world.orgs["same"].group
            resp = await client.post("/invitations", headers=bearer(admin), json={
                "email": "fed@example.com", "role": "operator", "group_ids": [group]})  # fmt: skip
            assert resp.status == 201
            link = f"{base}/ui/invitation?token={token_of(await sink.wait_for('fed@example.com'))}"
            person = await Walk.open(browser, axe, "invitee-federated", folder=FOLDER, width=390)
            await person.page.goto(link)
            await person.check("federated-invitation")
            await person.page.get_by_role("button", name="Continue with TestIdP").click()
            upstream = DevInteractions("fedzoe")
            for _ in range(6):
                if person.page.url.startswith(f"{base}/ui/account"):
                    break
                await person.page.wait_for_load_state()
                action = await upstream.next_action(person.page)
                if action is not None:
                    await action()
                    await person.page.wait_for_load_state()
            await person.page.wait_for_url(f"{base}/ui/account")
            body = await person.page.locator("body").inner_text()
            assert "fed@example.com" in body and "Unlink TestIdP" in body, body
            await person.check("federated-account")
            users = await (await client.get("/users", headers=bearer(admin),
                                            params={"limit": "200"})).json()  # fmt: skip
            made = [u for u in users["items"] if u["email"] == "fed@example.com"]
            assert [(u["role"], u["org_id"], u["email_verified"]) for u in made] == [
                ("operator", HOME, True)]  # fmt: skip
            detail = await (await client.get(f"/groups/{group}", headers=bearer(admin))).json()
            assert made[0]["id"] in [m["id"] for m in detail["members"]]
            assert person.console_errors == []
