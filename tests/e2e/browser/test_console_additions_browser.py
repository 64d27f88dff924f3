"""The admin console's additions in a real browser (docs/reference/console.md, ADR 0046): Debian's
Chromium driven by Playwright through ``executable_path``, one browser for the module, one walk
(``tests.e2e.walk.Walk``) per width × language of ``WIDTHS`` × ``LOCALES``, each doing every
addition as a superadmin with clicks and typing only:

- the user page's "Send a password-reset link" (the audit log then holds its
  ``password.reset_requested`` row, the superadmin as actor, read over the JSON API);
- the client form: the "machine" and "web app" presets, a refused value drawn again on the form
  with its message by the field (nothing stored), the register with post-logout redirect URIs
  and the token endpoint method, then the same form editing it;
- the identity providers page (GitHub ready, an unreachable one with its reason, a disabled one);
- the audit log naming the actor and the user by email;
- then the console's other pages (groups, a group, a confirmation, the 404 page) fit as well.

Each action is a ``Console.step``: the world's state afterwards is the state before with exactly
the step's edit, and what changed reads the same over the JSON API. Every page is checked by
``walk.check``: axe-core finds no serious or critical violation and the page does not scroll
sideways (390 px included); screenshots in ``tests/artifacts/admin-console-additions/``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer
from playwright.async_api import Browser, async_playwright

from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from tests.e2e.accounts_world import HOME, MISSING_ID, OTHER, log_in_as, make_world
from tests.e2e.accounts_world import (
    shared_key_dir as shared_key_dir,  # one RSA key per module
)
from tests.e2e.console_harness import NOTHING, Console, Edit, Later, Served, client, new_client
from tests.e2e.helpers import bearer
from tests.e2e.servers import free_port
from tests.e2e.walk import LOCALES, WIDTHS, Walk

FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update",
         "--disable-sync"]  # fmt: skip
FOLDER = "admin-console-additions"

pytestmark = pytest.mark.asyncio(loop_scope="module")  # one browser for the module's tests


@pytest.fixture
def deployment() -> tuple[str, str]:
    """SQLite with RS256: the browser's part does not depend on the storage."""
    return ("sqlite", "RS256")


@pytest.fixture
def base_env(base_env: dict[str, str], shared_key_dir: Path) -> dict[str, str]:
    return {**base_env, "AUTHSVC_AUTH__KEY_DIR": str(shared_key_dir)}


@pytest.fixture(scope="module")
def axe(node_modules: Path) -> str:
    """axe-core's script, from the lockfile's install."""
    return (node_modules / "node_modules" / "axe-core" / "axe.min.js").read_text("utf-8")


@pytest_asyncio.fixture(loop_scope="module")
async def served(base_env: dict[str, str], tmp_path: Path) -> AsyncIterator[Served]:
    """A fresh app and world for each walk, with three identity providers configured."""
    port = free_port()
    base = f"http://localhost:{port}"
    config = tmp_path / "authsvc.toml"
    config.write_text(f"""
[[federation.providers]]
id = "gh"
name = "GitHub"
kind = "github"
client_id = "g"
client_secret = "gh-secret"

[[federation.providers]]
id = "down"
name = "Down"
issuer = "http://127.0.0.1:{free_port()}"
client_id = "c"
client_secret = "down-secret"

[[federation.providers]]
id = "off"
name = "Off"
issuer = "https://idp.example"
client_id = "o"
client_secret = "off-secret"
enabled = false
""")
    environ = {**base_env, "AUTHSVC_AUTH__ISSUER": base}
    environ.pop("AUTHSVC_AUTH__ALGORITHM", None)
    app = create_app(build_container(load_config(str(config), environ=environ),
                                     config_path=str(config), environ=environ))  # fmt: skip
    async with TestClient(TestServer(app, port=port)) as test_client:
        yield Served(test_client, await make_world(test_client), base)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def browser(chromium: str) -> AsyncIterator[Browser]:
    async with async_playwright() as pw:
        launched = await pw.chromium.launch(executable_path=chromium, args=FLAGS)
        try:
            yield launched
        finally:
            await launched.close()


async def checked(ui: Console, name: str) -> bool:
    return await ui.page.locator(f"input[name='{name}']").is_checked()


@pytest.mark.parametrize(("width", "locale"), [(w, lang) for w in WIDTHS for lang in LOCALES])
async def test_every_addition_at_each_width_and_language(
    served: Served, browser: Browser, axe: str, width: int, locale: str
) -> None:
    target = served.world.orgs["other"].target
    token = await log_in_as(served.world, "superadmin")
    walk = await Walk.open(browser, axe, "additions", folder=FOLDER, width=width, locale=locale)
    ui = Console(served, walk, token, locale)
    await ui.sign_in("superadmin", check=True)
    await walk.check("dashboard")
    await ui.page.click(f"nav >> text={ui.say('Users')}")
    await walk.check("users")

    # the reset link, from the user's page
    await ui.goto(f"/ui/admin/users/{target}")
    await walk.check("user")
    await ui.step("send a reset link", lambda: ui.press("Send a password-reset link",
                                                       "reset_sent"), NOTHING)  # fmt: skip
    await walk.check("reset-sent")
    rows = (await ui.api(f"/audit-events?type=password.reset_requested&user_id={target}"
                         f"&org_id={OTHER}"))["items"]  # fmt: skip
    assert [(r["actor_id"], r["user_id"]) for r in rows] == [
        (served.world.user_ids["superadmin"], target)]  # fmt: skip

    # the client form: presets, a refusal on the form, register, edit
    cid = Later()
    app = {"#client-name": "Shop", "#client-scopes": "read",
           "#client-redirect_uris": "https://shop.example/cb",
           "#client-post_logout_redirect_uris": "https://shop.example/bye"}  # fmt: skip

    async def presets() -> None:
        await ui.page.click(f"nav >> text={ui.say('OAuth clients')}")
        assert await checked(ui, "grant_types__authorization_code")  # the web app preset
        assert not await checked(ui, "grant_types__client_credentials")
        await walk.check("clients")
        await ui.page.get_by_role("link", name=ui.say("a machine (client credentials)")).click()
        await ui.page.wait_for_url("**preset=machine*")
        assert await checked(ui, "grant_types__client_credentials")
        assert not await checked(ui, "grant_types__authorization_code")
        await ui.page.get_by_role(
            "link", name=ui.say("a web app (code flow, with a secret)")
        ).click()
        await ui.page.wait_for_url("**preset=app*")

    async def refused() -> None:
        await ui.fill(app)
        await ui.page.select_option("#client-token_endpoint_auth_method", "none")
        async with ui.page.expect_response(lambda r: r.request.method == "POST") as answer:
            await ui.page.get_by_role("button", name=ui.say("Register client")).click()
        assert (await answer.value).status == 422
        await ui.page.wait_for_load_state()
        message = await ui.text("#client-token_endpoint_auth_method-error")
        assert "public" in message, message
        assert await ui.page.locator("#client-post_logout_redirect_uris").input_value() == (
            "https://shop.example/bye"
        )  # what was typed is kept
        await walk.check("client-form-error")

    async def register() -> None:
        await ui.page.select_option("#client-token_endpoint_auth_method", "client_secret_post")
        await ui.press("Register client", "client")
        cid.value = await ui.text("#client-id")
        await walk.check("client")

    async def edit() -> None:
        await ui.press("Save", "client_updated", {
            "#client-post_logout_redirect_uris": "https://shop.example/bye\n"
                                                 "https://shop.example/out"})  # fmt: skip

    steps: list[tuple[str, Callable[[], Awaitable[Any]], Edit]] = [
        ("the presets", presets, NOTHING),
        ("a refused value", refused, NOTHING),
        ("register", register, new_client(
            cid, name="Shop", scopes=("read",), grant_types=("authorization_code",
            "refresh_token"), redirect_uris=("https://shop.example/cb",),
            post_logout_redirect_uris=("https://shop.example/bye",),
            token_endpoint_auth_method="client_secret_post", public=False, disabled=False,
            org_id=HOME, skip_consent=False, secret_rotated_at=None)),
        ("edit", edit, client(cid, post_logout_redirect_uris=("https://shop.example/bye",
                                                              "https://shop.example/out"))),
    ]  # fmt: skip
    for name, act, change in steps:
        await ui.step(name, act, change)
    resp = await served.client.get(f"/oauth/clients/{cid}", headers=bearer(token))
    record = await resp.json()
    assert record["post_logout_redirect_uris"] == ["https://shop.example/bye",
                                                   "https://shop.example/out"]  # fmt: skip
    assert record["token_endpoint_auth_method"] == "client_secret_post"

    # the identity providers, read only
    await ui.page.click(f"nav >> text={ui.say('Identity providers')}")
    await walk.check("providers")
    rows_shown = {r[0]: r for r in await ui.cells("#providers tbody tr")}
    assert rows_shown["GitHub gh"][3] == ui.say("ready")
    assert rows_shown["Down down"][3].startswith(ui.say("unreachable"))
    assert rows_shown["Off off"][3] == ui.say("disabled")
    assert "secret" not in await ui.text("#providers")

    # the audit log names people by email
    await ui.page.click(f"nav >> text={ui.say('Audit log')}")
    await ui.page.select_option("#type", "password.reset_requested")
    await ui.page.click("form.filters button")
    await ui.page.wait_for_url("**type=password.reset_requested*")
    [row] = await ui.cells("#events tbody tr")
    assert (row[2], row[3]) == ("root@example.com", f"target@{OTHER}.example")
    await walk.check("audit")

    # the other console pages fit too: groups, a group, a confirmation, the 404 page
    await ui.page.click(f"nav >> text={ui.say('Groups')}")
    await walk.check("groups")
    await ui.goto(f"/ui/admin/groups/{served.world.orgs['other'].group}")
    await walk.check("group")
    await ui.goto(f"/ui/admin/clients/{cid}/delete")
    await walk.check("confirm")
    assert await ui.goto(f"/ui/admin/users/{MISSING_ID}") == 404
    await walk.check("404")
    assert walk.console_errors == [], walk.console_errors
