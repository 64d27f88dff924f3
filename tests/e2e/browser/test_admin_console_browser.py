"""The admin console in a real browser (docs/reference/console.md and docs/reference/accounts.md):
Debian's Chromium (``AUTHSVC_TEST_CHROMIUM``, e.g. ``/usr/bin/chromium``) driven by Playwright
through ``executable_path`` (never ``playwright install``), one browser for the module, one context
per role. Every action is a click or a form filled in the browser, never a form posted by the HTTP
client. Each test has its own app and ``tests.e2e.accounts_world`` world.

Every console action of section 18, for each role and organization case:

- org_admin of ``default``, its own organization: the live user search (no org filter); every
  user action on its ``target`` (set the role, end one session, end every session, turn MFA
  off, delete a passkey, disable, enable, delete through the confirmation page — whose Cancel
  keeps the user —, the user's identity at another provider listed and then gone with it); an
  escalation to superadmin is the 403 page and changes nothing. Groups: create, rename, add a
  member by email, remove it, delete (confirmed; Cancel keeps it). OAuth clients: register (the
  secret shown once, gone on reload, and it works), rotate the secret (the old one void), edit
  the redirect URIs (no ``skip_consent`` box: a superadmin's), disable, enable, delete
  (confirmed; Cancel keeps it).
  The audit log filtered by type, by user and by date ranges, and its CSV export downloaded
  (a header row of the AuditEvent fields, the API's events); the dashboard's figures against
  the API.
- org_admin and the other organization (``acme``): that organization's user, group, client and
  their delete confirmation pages, and its users list, are the 404 page; the org_admin's own
  users' pages have no move form.
- superadmin on ``acme``'s items: the users search across organizations and with the org
  filter; the move to another organization with the ``#new-org`` form (the user leaves its old
  organization's groups); the org filter of the groups, a group created with ``org_id``, a
  member added and removed, the group deleted; a client rotated, disabled, enabled, deleted;
  every user action as above, delete included; the signing keys on the dashboard (the JWKS's).
- viewer and operator: /ui/admin and deep pages (a user, the CSV, a confirmation) are the 403
  page.

"Changes exactly what the matching API call changes": each action is a ``Console.step``. A
``state`` of the world (``accounts_world.snapshot`` with users and clients read whole, and
users' identities) is taken before; after the browser action the state must equal the
before-state with exactly the step's expected edit applied (nothing else changed), and each
item the edit touches is read over the JSON API with the caller's bearer token and must show
the edit (a deleted one: 404).

axe-core (``tests/interop``'s lockfile, installed by ``npm ci``) runs once on each distinct page
(login, dashboard with and without keys, users, user with and without the move form,
confirmation, 403 and 404 pages, groups, group, clients, new secret, audit log, consent): no
serious or critical violation. Screenshots go to ``tests/artifacts/admin-console/``
(git-ignored), kept as the run's artifacts. No walk logs a script or CSP error.
"""

from __future__ import annotations

import csv
import functools
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer
from playwright.async_api import Browser, async_playwright, expect

from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from entrypoints.http.console.audit import CSV_FIELDS
from tests.e2e.accounts_world import HOME, OTHER, make_world
from tests.e2e.accounts_world import (
    shared_key_dir as shared_key_dir,  # one RSA key per module
)
from tests.e2e.console_harness import (
    EMAILS,
    NOTHING,
    Console,
    Edit,
    HashOf,
    Later,
    Not,
    Served,
    client,
    edits,
    gone,
    group,
    new_client,
    new_group,
    token_status,
    user,
    user_actions,
    with_identity,
    with_mfa,
)
from tests.e2e.helpers import PASSWORD
from tests.e2e.oidc_helpers import auth_params, pkce, register_client
from tests.e2e.servers import free_port

CHROMIUM = os.environ.get("AUTHSVC_TEST_CHROMIUM")
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update",
         "--disable-sync"]  # fmt: skip

pytestmark = pytest.mark.asyncio(loop_scope="module")  # one browser for the module's tests


@pytest.fixture
def deployment() -> tuple[str, str]:
    """SQLite with RS256: the browser's part does not depend on the storage."""
    return ("sqlite", "RS256")


@pytest.fixture
def base_env(base_env: dict[str, str], shared_key_dir: Path) -> dict[str, str]:
    """conftest's environment with the module's one key directory, and ``read`` in
    ``oauth.shared_scopes`` (the org_admin's client holds it)."""
    return {**base_env, "AUTHSVC_AUTH__KEY_DIR": str(shared_key_dir),
            "AUTHSVC_OAUTH__SHARED_SCOPES": "read"}  # fmt: skip


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
    """A fresh app and world for each test, served in the module's event loop (the browser's)."""
    port = free_port()
    base = f"http://localhost:{port}"
    environ = {**base_env, "AUTHSVC_AUTH__ISSUER": base}
    app = create_app(build_container(load_config(environ=environ), environ=environ))
    async with TestClient(TestServer(app, port=port)) as client:
        yield Served(client, await make_world(client), base)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def browser(chromium: str) -> AsyncIterator[Browser]:
    """One Chromium for the module (each role walks in its own context)."""
    async with async_playwright() as pw:
        launched = await pw.chromium.launch(executable_path=chromium, args=FLAGS)
        try:
            yield launched
        finally:
            await launched.close()


# --------------------------------------------------------------------------- org_admin


async def test_org_admin_every_user_action_in_its_org_and_404s_outside(
    served: Served, browser: Browser, axe: str
) -> None:
    same, other = served.world.orgs["same"], served.world.orgs["other"]
    await with_mfa(served, "target@default.example")  # (and a second session)
    await with_identity(served, same.target, same.target)
    ui = await Console.open(served, browser, axe, "org_admin")
    await ui.sign_in("org_admin", check=True)
    await ui.walk.check("dashboard")

    # the users list: the live search (htmx), this org only, no org filter; the user page
    await ui.page.click("nav >> text=Users")
    await ui.page.fill("#email", "TARG")
    await ui.page.wait_for_url("**/ui/admin/users?email=TARG*")
    await ui.page.wait_for_selector("text=target@default.example")
    assert await ui.page.locator("text=target@acme.example").count() == 0
    assert await ui.page.locator("#org_id").count() == 0
    await ui.walk.check("users")
    await ui.page.click("text=target@default.example")
    await ui.page.wait_for_url(f"{ui.base}/ui/admin/users/{same.target}")
    assert await ui.page.locator("#new-org").count() == 0  # no move form for an org_admin

    # an escalation to superadmin is the 403 page and changes nothing
    await ui.step("escalate", lambda: ui.refused("Set role", 403, {"#new-role": "superadmin"}),
                  NOTHING)  # fmt: skip
    await ui.walk.check("403")
    await user_actions(ui, same.target, check=True)

    # the other organization: its items and their confirmation pages are the 404 page
    async def other_org_pages() -> None:
        for path in (f"/ui/admin/users/{other.target}", f"/ui/admin/groups/{other.group}",
                     f"/ui/admin/clients/{other.oauth_client}"):  # fmt: skip
            for page in (path, f"{path}/delete"):
                assert await ui.goto(page) == 404, page
                assert await ui.text("h1") == "Not done"
        assert await ui.goto(f"/ui/admin/users?org_id={OTHER}") == 404

    await ui.step("the other org's pages", other_org_pages, NOTHING)
    await ui.walk.check("404")
    await ui.goto(f"/ui/admin/users/{same.member}")
    assert await ui.page.locator("#new-org").count() == 0
    assert await ui.text("#identities tbody") == "None linked."
    assert ui.walk.console_errors == [], ui.walk.console_errors  # no CSP or script error


async def test_org_admin_groups_and_clients(served: Served, browser: Browser, axe: str) -> None:
    same = served.world.orgs["same"]
    ui = await Console.open(served, browser, axe, "org_admin")
    await ui.sign_in("org_admin")

    gid = Later()

    async def create_group() -> None:
        await ui.page.click("nav >> text=Groups")
        await ui.walk.check("groups")
        await ui.press("Create group", "group", {"#group-name": "browser team"})
        gid.value = ui.page.url.split("?")[0].rsplit("/", 1)[1]

    group_steps: list[tuple[str, Callable[[], Awaitable[Any]], Edit]] = [
        ("create a group", create_group, new_group(gid, "browser team", HOME)),
        ("rename it", lambda: ui.press("Rename", "renamed", {"#rename": "browser crew"}),
         group(gid, name="browser crew")),
        ("add a member by email", lambda: ui.press("Add member", "member_added",
                                                   {"#member": "Target@Default.example"}),
         group(gid, members=[same.target])),
        ("remove it", lambda: ui.press("Remove target@default.example", "member_removed"),
         group(gid, members=[])),
        ("the confirmation page", lambda: ui.ask_to_delete("group"), NOTHING),
        ("its cancel keeps the group", ui.cancel, NOTHING),
        ("delete the group", lambda: ui.confirm("group", "group_deleted"), gone("groups", gid)),
    ]  # fmt: skip
    for name, act, edit in group_steps:
        await ui.step(name, act, edit)
        if name == "add a member by email":
            await ui.walk.check("group")

    cid, secret, old_secret = Later(), Later(), Later()

    async def register() -> None:
        await ui.page.click("nav >> text=OAuth clients")
        await ui.walk.check("clients")
        await ui.page.get_by_label("client_credentials").check()  # and the app preset's grants
        assert await ui.page.locator("input[name=skip_consent]").count() == 0  # a superadmin's
        await ui.press("Register client", "client", {
            "#client-name": "Browser portal", "#client-scopes": "read",
            "#client-redirect_uris": "https://portal.example/cb\n"})  # fmt: skip
        cid.value = await ui.text("#client-id")
        secret.value = await ui.text("#client-secret")
        await ui.walk.check("client-secret")

    async def rotate() -> None:
        old_secret.value = secret.value
        await ui.press("Rotate the secret", "rotated")
        secret.value = await ui.text("#client-secret")

    async def edit_uris() -> None:
        assert await ui.page.locator("input[name=all_organizations]").count() == 0
        await ui.press("Save", "client_updated",
                       {"#client-redirect_uris": "https://portal.example/a\nhttps://portal.example/b"})  # fmt: skip

    client_steps: list[tuple[str, Callable[[], Awaitable[Any]], Edit]] = [
        ("register a client", register, new_client(
            cid, name="Browser portal", org_id=HOME, scopes=("read",), disabled=False,
            grant_types=("client_credentials", "authorization_code", "refresh_token"),
            public=False,
            redirect_uris=("https://portal.example/cb",), skip_consent=False,
            secret_hash=HashOf(secret), secret_rotated_at=None, previous_secret_hash=None)),
        ("rotate its secret", rotate, client(cid, secret_hash=HashOf(secret),
                                             secret_rotated_at=Not(None))),
        ("edit the redirect URIs", edit_uris, client(
            cid, redirect_uris=("https://portal.example/a", "https://portal.example/b"))),
        ("disable it", lambda: ui.press("Disable this client", "client_updated"),
         client(cid, disabled=True)),
        ("enable it", lambda: ui.press("Enable this client", "client_updated"),
         client(cid, disabled=False)),
        ("the confirmation page", lambda: ui.ask_to_delete("client"), NOTHING),
        ("its cancel keeps the client", ui.cancel, NOTHING),
        ("delete the client", lambda: ui.confirm("client", "client_deleted"),
         gone("clients", cid)),
    ]  # fmt: skip
    for name, act, edit in client_steps:
        await ui.step(name, act, edit)
        if name == "register a client":  # the secret once, and it works
            await ui.page.reload()
            assert await ui.page.locator("#client-secret").count() == 0
            assert await token_status(served, str(cid), str(secret)) == 200
        if name == "rotate its secret":  # the old secret is void (no grace by default)
            assert await token_status(served, str(cid), str(old_secret)) == 401
            assert await token_status(served, str(cid), str(secret)) == 200
    await consent_page(ui)
    assert ui.walk.console_errors == [], ui.walk.console_errors


async def consent_page(ui: Console) -> None:
    """The hosted consent page passes axe too (signed in already: authorize shows it)."""
    app = await register_client(ui.client, redirect_uris=("http://127.0.0.1:9/cb",))
    _, challenge = pkce()
    params = auth_params(app, challenge, redirect_uri="http://127.0.0.1:9/cb")
    await ui.page.goto(f"{ui.base}/oauth/authorize?{urlencode(params)}")
    assert "/ui/consent" in ui.page.url, ui.page.url
    await ui.walk.check("consent")


def _next_day(day: str) -> str:
    return (datetime.fromisoformat(day) + timedelta(days=1)).date().isoformat()


async def test_org_admin_audit_log_and_dashboard(
    served: Served, browser: Browser, axe: str
) -> None:
    same = served.world.orgs["same"]
    resp = await served.client.post("/login", json={"email": "target@default.example",
                                                    "password": "wrong"})  # fmt: skip
    assert resp.status == 401
    ui = await Console.open(served, browser, axe, "org_admin")
    await ui.sign_in("org_admin")

    # the dashboard's figures are the API's
    users = (await ui.api("/users?limit=200"))["items"]
    assert await ui.text("#stat-users") == str(len(users)) == "4"
    live = [s for u in users for s in (await ui.api(f"/users/{u['id']}/sessions"))["items"]]
    assert await ui.text("#stat-sessions") == str(len(live))
    since = (datetime.now(UTC) - timedelta(hours=23)).strftime("%Y-%m-%dT%H")
    for stat, kind in (("#stat-logins", "login.succeeded"), ("#stat-failures", "login.failed")):
        events = (await ui.api(f"/audit-events?type={kind}&limit=200"))["items"]
        assert await ui.text(stat) == str(sum(e["occurred_at"] >= since for e in events))
    assert await ui.text("#stat-failures") == "1"
    assert await ui.page.locator("#keys").count() == 0  # superadmin only

    async def table() -> list[tuple[str, str, str]]:
        """(when, type, user) of the events shown."""
        return [(c[0], c[1], c[3]) for c in await ui.cells("#events tbody tr")]

    emails = {u["id"]: u["email"] for u in users}  # the org_admin's organization's users

    def shown(items: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
        """(when, type, user) as the page shows them: the user's email (an id of a user it
        cannot see, or of a deleted one)."""
        return [(e["occurred_at"], e["type"], emails.get(e["user_id"], e["user_id"] or ""))
                for e in items]  # fmt: skip

    async def filter_by(fields: dict[str, str], url: str) -> None:
        await ui.fill(fields)
        await ui.page.click("form.filters button")
        await ui.page.wait_for_url(url)

    async def audit_reads() -> None:
        await ui.page.click("nav >> text=Audit log")
        unfiltered = (await ui.api("/audit-events?limit=50"))["items"]
        assert await table() == shown(unfiltered)
        await filter_by({"#type": "login.failed"}, "**type=login.failed*")
        failed = (await ui.api("/audit-events?type=login.failed"))["items"]
        assert await table() == shown(failed) and len(failed) == 1
        await ui.walk.check("audit")

        await filter_by({"#type": "", "#user_id": same.target}, f"**user_id={same.target}*")
        of_target = (await ui.api(f"/audit-events?user_id={same.target}&limit=200"))["items"]
        assert await table() == shown(of_target) and len(of_target) >= 3
        async with ui.page.expect_download() as download:
            await ui.page.click("#csv")
        path = await (await download.value).path()
        rows = list(csv.reader(path.read_text("utf-8").splitlines()))
        assert rows[0] == list(CSV_FIELDS)  # the AuditEvent fields of section 11
        assert [r[0] for r in rows[1:]] == [e["id"] for e in of_target]
        assert all(r[4] == same.target and r[5] == HOME for r in rows[1:])

        days = sorted({e["occurred_at"][:10] for e in unfiltered})
        for first, last, expected in ((days[0], days[-1], unfiltered),
                                      ("2000-01-01", "2000-01-02", []),
                                      (_next_day(days[-1]), "", [])):  # fmt: skip
            await filter_by({"#user_id": "", "#from": first, "#to": last}, f"**from={first}*")
            if expected:
                assert await table() == shown(expected)
            else:
                assert await ui.text("#events tbody") == "No event matches."

    await ui.step("the audit log's filters and CSV", audit_reads, NOTHING)
    assert ui.walk.console_errors == [], ui.walk.console_errors


# --------------------------------------------------------------------------- superadmin


async def test_superadmin_acts_on_another_org(served: Served, browser: Browser, axe: str) -> None:
    other = served.world.orgs["other"]
    ui = await Console.open(served, browser, axe, "superadmin")
    await ui.sign_in("superadmin")
    jwks = (await (await served.client.get("/.well-known/jwks.json")).json())["keys"]
    keys = await ui.cells("#keys tbody tr")
    assert keys and sorted(keys) == sorted([k["kid"], k["alg"], k["kty"]] for k in jwks)
    assert "RS256" in await ui.text("#keys")
    await ui.walk.check("dashboard")

    # the users list: a search spans every org; the org filter narrows it
    await ui.page.click("nav >> text=Users")
    await ui.page.fill("#email", "target@")
    await ui.page.wait_for_url("**email=target%40*")
    await ui.page.wait_for_selector("text=target@acme.example")
    assert await ui.page.locator("text=target@default.example").count() == 1
    await ui.fill({"#org_id": OTHER, "#email": ""})
    await ui.page.get_by_role("button", name="Search").click()
    await ui.page.wait_for_url(f"**org_id={OTHER}*")
    await expect(ui.page.locator("text=target@default.example")).to_have_count(0)
    listed = await ui.page.locator("#results tbody tr td:first-child").all_inner_texts()
    in_acme = (await ui.api(f"/users?org_id={OTHER}"))["items"]
    assert sorted(listed) == sorted(u["email"] for u in in_acme) and len(listed) == 2

    # the move: member@acme goes to initech and leaves team-acme
    await ui.page.click("text=member@acme.example")
    await ui.page.wait_for_url(f"**/ui/admin/users/{other.member}")
    assert await ui.page.locator("#new-org").input_value() == OTHER
    await ui.walk.check("user-with-move")
    await ui.step(
        "move to another org",
        lambda: ui.press("Move", "moved", {"#new-org": "initech"}),
        edits(user(other.member, org_id="initech"), group(other.group, members=[])),
    )
    assert await ui.text("#groups") == "None."

    # groups: the org filter, a group of acme, a member added and removed, deleted
    gid = Later()

    async def create_group() -> None:
        await ui.page.click("nav >> text=Groups")
        await ui.fill({"#filter-org": OTHER})
        await ui.page.get_by_role("button", name="Show").click()
        await ui.page.wait_for_url(f"**/ui/admin/groups?org_id={OTHER}")
        names = await ui.page.locator("tbody tr td:first-child").all_inner_texts()
        assert names == [g["name"] for g in (await ui.api(f"/groups?org_id={OTHER}"))["items"]]
        assert names == [f"team-{OTHER}"]
        await ui.press("Create group", "group", {"#group-name": "acme ops", "#group-org": OTHER})
        gid.value = ui.page.url.split("?")[0].rsplit("/", 1)[1]

    group_steps: list[tuple[str, Callable[[], Awaitable[Any]], Edit]] = [
        ("create a group in acme", create_group, new_group(gid, "acme ops", OTHER)),
        ("add a member", lambda: ui.press("Add member", "member_added",
                                          {"#member": "target@acme.example"}),
         group(gid, members=[other.target])),
        ("remove it", lambda: ui.press("Remove target@acme.example", "member_removed"),
         group(gid, members=[])),
        ("delete the group", lambda: ui.confirm("group", "group_deleted"), gone("groups", gid)),
    ]  # fmt: skip
    for name, act, edit in group_steps:
        await ui.step(name, act, edit)

    # acme's client: rotate, disable, enable, delete
    await ui.goto(f"/ui/admin/clients/{other.oauth_client}")
    secret = Later()

    async def rotate() -> None:
        await ui.press("Rotate the secret", "rotated")
        secret.value = await ui.text("#client-secret")

    c = other.oauth_client
    client_steps: list[tuple[str, Callable[[], Awaitable[Any]], Edit]] = [
        ("rotate", rotate, client(c, secret_hash=HashOf(secret), secret_rotated_at=Not(None))),
        ("disable", lambda: ui.press("Disable this client", "client_updated"),
         client(c, disabled=True)),
        ("enable", lambda: ui.press("Enable this client", "client_updated"),
         client(c, disabled=False)),
        ("delete", lambda: ui.confirm("client", "client_deleted"), gone("clients", c)),
    ]  # fmt: skip
    for name, act, edit in client_steps:
        await ui.step(name, act, edit)

    # acme's target: every user action
    await with_mfa(served, "target@acme.example")
    await with_identity(served, other.target, other.target)
    await user_actions(ui, other.target)
    assert ui.walk.console_errors == [], ui.walk.console_errors


# --------------------------------------------------------------------------- viewer, operator


async def refused_pages(ui: Console, paths: tuple[str, ...]) -> None:
    """Each of ``paths`` is the 403 page."""
    for path in paths:
        assert await ui.goto(path) == 403, path
        assert await ui.text("h1") == "Not done"


async def test_viewer_and_operator_get_the_403_page(
    served: Served, browser: Browser, axe: str
) -> None:
    same = served.world.orgs["same"]
    for role in ("viewer", "operator"):
        ui = await Console.open(served, browser, axe, role)
        await ui.page.goto(f"{ui.base}/ui/admin")
        await ui.fill({"input[name=email]": EMAILS[role], "input[name=password]": PASSWORD})
        async with ui.page.expect_response(f"{ui.base}/ui/admin") as answered:
            await ui.page.click("form[action='/ui/login'] button[type=submit]")
        assert (await answered.value).status == 403
        assert await ui.text("h1") == "Not done"
        if role == "viewer":
            await ui.walk.check("403")

        deep = (f"/ui/admin/users/{same.target}", "/ui/admin/audit.csv",
                f"/ui/admin/clients/{same.oauth_client}/delete")  # fmt: skip
        await ui.step(f"a {role}'s deep pages", functools.partial(refused_pages, ui, deep), NOTHING)
        assert ui.walk.console_errors == [], ui.walk.console_errors
