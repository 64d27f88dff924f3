"""The admin console in a real browser (contract sections 18 and 3): Debian's Chromium
(``AUTHSVC_TEST_CHROMIUM``, e.g. ``/usr/bin/chromium``) driven by Playwright through
``executable_path`` (never ``playwright install``), one browser for the module, one context per
role. Every action is a click or a form filled in the browser, never a form posted by the HTTP
client. Each test has its own app and ``test_admin_http`` world.

Every console action of section 18, for each role and organization case:

- org_admin of ``default``, its own organization: the live user search (no org filter); every
  user action on its ``target`` (set the role, end one session, end every session, turn MFA
  off, delete a passkey, disable, enable, delete through the confirmation page — whose Cancel
  keeps the user —, the user's identity at another provider listed and then gone with it); an
  escalation to superadmin is the 403 page and changes nothing. Groups: create, rename, add a
  member by email, remove it, delete (confirmed; Cancel keeps it). OAuth clients: register (the
  secret shown once, gone on reload, and it works), rotate the secret (the old one void), edit
  the redirect URIs and ``skip_consent``, disable, enable, delete (confirmed; Cancel keeps it).
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
``state`` of the world (``test_admin_http.snapshot`` with users and clients read whole, and
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

import base64
import copy
import csv
import functools
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest.mock import ANY
from urllib.parse import urlencode

import attrs
import pyotp
import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer
from playwright.async_api import Browser, Page, async_playwright, expect

from application.shared.steps import hash_token
from domain.clients import Client
from domain.federation import FederatedIdentity
from domain.model import Role
from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from entrypoints.http.ui.admin_audit import CSV_FIELDS
from entrypoints.http.ui.console import DONE
from tests.e2e.conftest import PASSWORD, bearer
from tests.e2e.oidc_helpers import auth_params, pkce, register_client
from tests.e2e.servers import free_port
from tests.e2e.test_admin_http import HOME, OTHER, World, log_in_as, login, make_world, snapshot
from tests.e2e.test_admin_http import shared_key_dir as shared_key_dir  # one RSA key per module
from tests.interop.conftest import node_modules as node_modules  # the npm ci fixture

CHROMIUM = os.environ.get("AUTHSVC_TEST_CHROMIUM")
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update",
         "--disable-sync"]  # fmt: skip
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "admin-console"
SEVERE = ("serious", "critical")
SELECTS = ("#new-role", "#type")  # the console's <select> fields
EMAILS = {"org_admin": f"org_admin@{HOME}.example", "superadmin": "root@example.com",
          "viewer": f"viewer@{HOME}.example", "operator": f"operator@{HOME}.example"}  # fmt: skip

pytestmark = pytest.mark.asyncio(loop_scope="module")  # one browser for the module's tests


@pytest.fixture
def deployment() -> tuple[str, str]:
    """SQLite with RS256: the browser's part does not depend on the storage."""
    return ("sqlite", "RS256")


@pytest.fixture
def base_env(base_env: dict[str, str], shared_key_dir: Path) -> dict[str, str]:
    """conftest's environment with the module's one key directory."""
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


@attrs.frozen
class Served:
    """The app on a real port (the browser's origin is its issuer) and its world."""

    client: TestClient
    world: World
    base: str


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


# --------------------------------------------------------------------------- the state

State = dict[str, dict[str, Any]]
Edit = Callable[[State], Any]


class Not:
    """Equal to any value but ``value`` (an expected edit whose exact value is unknown)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return bool(other != self.value)

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"Not({self.value!r})"


def _record(item: Any, *leave_out: str) -> dict[str, Any]:
    return attrs.asdict(item, recurse=False, filter=lambda a, _: a.name not in leave_out)


async def state(world: World) -> State:
    """``snapshot(world)`` (users, sessions, groups with members, clients, passkeys) with each
    user and client read whole (every field: the role, MFA, a client's redirect URIs, secret
    hash...), each group as ``{"name", "org_id", "members"}``, and each user's identities at
    other providers."""
    s = await snapshot(world)
    c = world.container
    users = (await c.list_users()(world.root, limit=200)).items
    s["users"] = {u.id: _record(u, "passkeys") for u in users}  # a count; passkeys are listed
    s["identities"] = {u.id: [_record(i) for i in (await c.get_user().detail(world.root, u.id))
                              .identities] for u in users}  # fmt: skip
    s["clients"] = {x.id: _record(x) for x in (await c.list_clients()(world.root, limit=200)).items}
    s["groups"] = {gid: {"name": name, "org_id": org, "members": members}
                   for gid, (name, org, members) in s["groups"].items()}  # fmt: skip
    return s


def _differences(expected: Any, got: Any, path: str = "") -> list[str]:
    """Where ``got`` differs from ``expected`` (paths into the state), for a readable failure."""
    if isinstance(expected, dict) and isinstance(got, dict):
        return [d for k in expected.keys() | got.keys()
                for d in _differences(expected.get(k, "<absent>"), got.get(k, "<absent>"),
                                      f"{path}/{k}")]  # fmt: skip
    return [] if got == expected else [f"{path}: expected {expected!r}, got {got!r}"]


class Later:
    """An id or secret a step's action finds (a new group, client or secret): the action sets
    ``value``, the step's edit reads it (edits run after the action)."""

    value = ""

    def __str__(self) -> str:
        return self.value


Id = str | Later


class HashOf:
    """Equal to the stored hash of the secret ``secret`` (``hash_token``)."""

    def __init__(self, secret: Later) -> None:
        self.secret = secret

    def __eq__(self, other: object) -> bool:
        return other == hash_token(str(self.secret))

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"HashOf({self.secret.value!r})"


# The expected edits: each changes the expected state in place.


def user(uid: str, **fields: Any) -> Edit:
    return lambda s: s["users"][uid].update(fields)


def sessions(uid: str, kept: list[str]) -> Edit:
    return lambda s: s["sessions"].__setitem__(uid, kept)


def passkeys(uid: str, kept: list[str]) -> Edit:
    return lambda s: s["passkeys"].__setitem__(uid, kept)


def new_group(gid: Later, name: str, org_id: str) -> Edit:
    return lambda s: s["groups"].__setitem__(str(gid), {"name": name, "org_id": org_id,
                                                         "members": []})  # fmt: skip


def group(gid: Id, **fields: Any) -> Edit:
    return lambda s: s["groups"][str(gid)].update(fields)


def new_client(cid: Later, **fields: Any) -> Edit:
    """A registered client: ``fields`` as given, the others whatever they are."""
    record = {f.name: ANY for f in attrs.fields(Client)}
    return lambda s: s["clients"].__setitem__(str(cid), {**record, "id": str(cid), **fields})


def client(cid: Id, **fields: Any) -> Edit:
    return lambda s: s["clients"][str(cid)].update(fields)


def gone(kind: str, item_id: Id) -> Edit:
    return lambda s: s[kind].pop(str(item_id))


def user_gone(uid: str) -> Edit:
    """A deleted user: its record, sessions, passkeys, identities and memberships."""

    def edit(s: State) -> None:
        for kind in ("users", "sessions", "passkeys", "identities"):
            s[kind].pop(uid)
        for g in s["groups"].values():
            g["members"] = [m for m in g["members"] if m != uid]

    return edit


def edits(*parts: Edit) -> Edit:
    return lambda s: [part(s) for part in parts]


NOTHING: Edit = edits()


# --------------------------------------------------------------------------- the browser


class Walk:
    """One browser context's walk: axe on each page, a screenshot of each, CSP reports."""

    def __init__(self, page: Page, axe: str, name: str) -> None:
        self.page, self._axe, self._name = page, axe, name
        self.console_errors: list[str] = []
        page.on("console", self._console)

    def _console(self, message: Any) -> None:
        """Script errors and CSP refusals (a 404 page or favicon load is no script error)."""
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            self.console_errors.append(message.text)

    async def check(self, shot: str) -> None:
        """axe-core finds no serious or critical violation here; a full-page screenshot."""
        await self.page.evaluate(self._axe)
        assert await self.page.evaluate("typeof axe.run") == "function"
        result = await self.page.evaluate(
            "axe.run(document, {resultTypes: ['violations']})"
            ".then(r => r.violations.map(v => ({id: v.id, impact: v.impact,"
            " nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5)})))"
        )
        severe = [v for v in result if v["impact"] in SEVERE]
        assert severe == [], f"{self.page.url}: {severe}"
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        await self.page.screenshot(path=str(ARTIFACTS / f"{self._name}-{shot}.png"), full_page=True)


class Console:
    """A role at the console in its own browser context (its ``walk``): page actions, each a
    ``step`` checked against the world's state and over the JSON API with the caller's bearer
    ``token``."""

    def __init__(self, served: Served, walk: Walk, token: str) -> None:
        self.served, self.client, self.world, self.base = (served, served.client, served.world,
                                                           served.base)  # fmt: skip
        self.walk, self.page, self.token = walk, walk.page, token

    @classmethod
    async def open(cls, served: Served, browser: Browser, axe: str, role: str) -> Console:
        token = await log_in_as(served.world, role)
        context = await browser.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(10_000)
        return cls(served, Walk(await context.new_page(), axe, role), token)

    async def sign_in(self, role: str, check: bool = False) -> None:
        """Open /ui/admin, land on the login page, sign in: back on the console."""
        await self.page.goto(f"{self.base}/ui/admin")
        assert self.page.url.startswith(f"{self.base}/ui/login?return_to="), self.page.url
        if check:
            await self.walk.check("login")
        await self.page.fill("input[name=email]", EMAILS[role])
        await self.page.fill("input[name=password]", PASSWORD)
        await self.page.click("form[action='/ui/login'] button[type=submit]")
        await self.page.wait_for_url(f"{self.base}/ui/admin")

    async def goto(self, path: str) -> int:
        """Open ``path``; the answer's status."""
        resp = await self.page.goto(f"{self.base}{path}")
        assert resp is not None
        return resp.status

    async def api(self, path: str, status: int = 200) -> Any:
        resp = await self.client.get(path, headers=bearer(self.token))
        assert resp.status == status, f"{path}: {resp.status} {await resp.text()}"
        return await resp.json() if status == 200 else None

    # ---- page actions

    async def fill(self, fields: dict[str, str]) -> None:
        """Fill in ``fields`` (CSS selector → value; a ``<select>``'s option is chosen)."""
        for selector, value in fields.items():
            if selector in SELECTS:
                await self.page.select_option(selector, value)
            else:
                await self.page.fill(selector, value)

    async def press(self, button: str, done: str, fields: dict[str, str] | None = None) -> None:
        """Fill in ``fields``, press the button named ``button`` (or matched by the CSS
        selector ``button``) and land on the page that says ``done`` (a key of the console's
        ``DONE``)."""
        await self.fill(fields or {})
        if button.startswith(("form", "#")):
            await self.page.locator(button).click()
        else:
            await self.page.get_by_role("button", name=button, exact=True).click()
        await self.page.wait_for_url(f"**done={done}")
        assert await self.page.locator("p.done").inner_text() == DONE[done]

    async def confirm(self, kind: str, done: str, check: bool = False) -> None:
        """The delete button of a detail page, its confirmation page, and its confirm
        button."""
        await self.ask_to_delete(kind, check)
        await self.page.get_by_role("button", name=f"Delete this {kind}", exact=True).click()
        await self.page.wait_for_url(f"**done={done}")

    async def ask_to_delete(self, kind: str, check: bool = False) -> None:
        """The delete button of a detail page leads to its confirmation page."""
        detail = self.page.url.split("?")[0]
        await self.page.get_by_role("button", name=f"Delete this {kind}…", exact=True).click()
        await self.page.wait_for_url(f"{detail}/delete?")  # a GET form with no field
        assert "cannot be undone" in await self.page.locator("main").inner_text()
        if check:
            await self.walk.check("confirm")

    async def cancel(self) -> None:
        """Cancel on a confirmation page: back on the detail page."""
        detail = self.page.url.split("?")[0].rsplit("/delete", 1)[0]
        await self.page.get_by_role("link", name="Cancel, keep it").click()
        await self.page.wait_for_url(detail)

    async def refused(self, button: str, status: int, fields: dict[str, str]) -> None:
        """As ``press``, but the answer is the ``status`` page."""
        await self.fill(fields)
        async with self.page.expect_response(lambda r: r.request.method == "POST") as answer:
            await self.page.get_by_role("button", name=button, exact=True).click()
        assert (await answer.value).status == status
        await self.page.wait_for_load_state()
        assert await self.page.locator("h1").inner_text() == "Not done"

    async def text(self, selector: str) -> str:
        return await self.page.locator(selector).inner_text()

    async def cells(self, rows: str) -> list[list[str]]:
        """The cells' texts of the table rows ``rows`` (a CSS selector)."""
        found: list[list[str]] = await self.page.locator(rows).evaluate_all(
            "rows => rows.map(r => [...r.cells].map(c => c.innerText.trim()))"
        )
        return found

    # ---- a step: the action changes exactly the expected edit, as the API shows it

    async def step(self, name: str, act: Callable[[], Awaitable[Any]], edit: Edit) -> None:
        """Run the browser action ``act``; the world's state must then be the state before
        with ``edit`` applied (``edit`` runs after ``act``, so it may use what ``act`` found),
        nothing else changed; each touched item is read over the API and shows the edit."""
        before = await state(self.world)
        await act()
        expected = copy.deepcopy(before)
        edit(expected)
        after = await state(self.world)
        assert after == expected, f"{name}: " + "; ".join(_differences(expected, after))
        assert expected != before or edit is NOTHING, f"{name}: the edit changes nothing"
        await self._api_shows(name, before, expected)

    async def _api_shows(self, name: str, before: State, expected: State) -> None:
        """Each item ``expected`` changed from ``before`` reads as expected over the API."""
        for kind, items in expected.items():
            for item_id in {k for k in items.keys() | before[kind].keys()
                            if items.get(k) != before[kind].get(k)}:  # fmt: skip
                if kind == "identities" or (
                    kind in ("sessions", "passkeys") and item_id not in expected["users"]
                ):
                    continue  # no admin route lists them; a deleted user: under "users"
                got, want = await self._over_api(kind, item_id), _as_api(kind, items.get(item_id))
                assert got == want, f"{name}: {kind} {item_id} over the API: {got} != {want}"

    async def _over_api(self, kind: str, item_id: str) -> Any:
        """The API's view of an item of the state (None: 404), shaped as ``_as_api``'s."""
        if kind in ("sessions", "passkeys"):
            return [x["id"] for x in (await self.api(f"/users/{item_id}/{kind}"))["items"]]
        path = {"users": "/users/", "groups": "/groups/", "clients": "/oauth/clients/"}[kind]
        resp = await self.client.get(f"{path}{item_id}", headers=bearer(self.token))
        if resp.status == 404:
            return None
        assert resp.status == 200, await resp.text()
        got = await resp.json()
        if kind == "groups":
            got["members"] = sorted(m["id"] for m in got["members"])
        if kind == "clients":
            got["rotated"] = got["secret_rotated_at"] is not None
        return {k: got[k] for k in _API_FIELDS[kind]}


_API_FIELDS = {
    "users": ("email", "role", "org_id", "disabled", "email_verified", "mfa_enabled"),
    "groups": ("name", "org_id", "members"),
    "clients": ("name", "org_id", "disabled", "scopes", "grant_types", "redirect_uris",
                "skip_consent", "public", "rotated"),
}  # fmt: skip


def _as_api(kind: str, item: Any) -> Any:
    """An item of the state as the API shows it (``Console._over_api``)."""
    if item is None or kind in ("sessions", "passkeys"):
        return item
    if kind == "clients":
        item = {**item, "rotated": item["secret_rotated_at"] is not None}
    return {k: list(item[k]) if isinstance(item[k], tuple) else item[k] for k in _API_FIELDS[kind]}


IDP = "https://idp.example"


async def with_identity(served: Served, uid: str, subject: str) -> None:
    """``uid`` gets an identity at the provider ``corp`` (stored through the port)."""
    linked = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)
    async with served.world.container.storage().begin() as uow:
        await uow.identities.add(FederatedIdentity(IDP, subject, "corp", uid, "t@corp.example",
                                                   linked))  # fmt: skip
        await uow.commit()


async def identity_of(served: Served, subject: str) -> FederatedIdentity | None:
    async with served.world.container.storage().begin() as uow:
        return await uow.identities.find(IDP, subject)


async def with_mfa(served: Served, email: str) -> None:
    """``email`` turns MFA on over the API, after a new login of it (a second session)."""
    access = (await login(served.client, email))["access_token"]
    resp = await served.client.post("/me/mfa/totp", json={"password": PASSWORD},
                                    headers=bearer(access))  # fmt: skip
    assert resp.status == 200, await resp.text()
    code = pyotp.TOTP((await resp.json())["secret"]).now()
    resp = await served.client.post("/me/mfa/totp/confirm", json={"code": code},
                                    headers=bearer(access))  # fmt: skip
    assert resp.status == 200, await resp.text()


async def token_status(served: Served, client_id: str, secret: str) -> int:
    """The token endpoint's status for a client-credentials grant with this secret."""
    basic = base64.b64encode(f"{client_id}:{secret}".encode()).decode()
    resp = await served.client.post("/oauth/token", data={"grant_type": "client_credentials"},
                                     headers={"Authorization": f"Basic {basic}"})  # fmt: skip
    return resp.status


async def user_actions(ui: Console, uid: str, check: bool = False) -> None:
    """Every action of a user's page on ``uid`` (two live sessions, MFA on, one passkey, one
    identity at ``corp`` with the subject ``uid``), each a step: role, one session, every
    session, MFA off, the passkey, disable, enable; then the confirmation page, its Cancel, and
    the delete (the identity goes too)."""
    await ui.goto(f"/ui/admin/users/{uid}")
    assert await ui.cells("#identities tbody tr") == [
        ["corp", uid, "t@corp.example", "2026-01-02 03:04", "never"]]  # fmt: skip
    if check:
        await ui.walk.check("user")
    before = await state(ui.world)
    first, second = before["sessions"][uid]
    assert before["users"][uid]["mfa_enabled"] and len(before["passkeys"][uid]) == 1
    steps: list[tuple[str, Callable[[], Awaitable[Any]], Edit]] = [
        ("set the role", lambda: ui.press("Set role", "role", {"#new-role": "operator"}),
         user(uid, role=Role.OPERATOR)),
        ("end one session", lambda: ui.press(f"form[action$='/sessions/{first}/end'] button",
                                             "session"),
         sessions(uid, [second])),
        ("end every session", lambda: ui.press("End every session", "sessions"),
         sessions(uid, [])),
        ("turn MFA off", lambda: ui.press("Turn two-step verification off", "mfa"),
         user(uid, mfa_enabled=False)),
        ("delete the passkey", lambda: ui.press("Delete the passkey laptop", "passkey"),
         passkeys(uid, [])),
        ("disable", lambda: ui.press("Disable this user", "disabled"), user(uid, disabled=True)),
        ("enable", lambda: ui.press("Enable this user", "enabled"), user(uid, disabled=False)),
        ("the confirmation page", lambda: ui.ask_to_delete("user", check), NOTHING),
        ("its cancel keeps the user", ui.cancel, NOTHING),
        ("delete", lambda: ui.confirm("user", "deleted"), user_gone(uid)),
    ]  # fmt: skip
    for name, act, edit in steps:
        await ui.step(name, act, edit)
    assert await ui.text("h1") == "Users"
    assert await ui.page.locator("#results").get_by_text(before["users"][uid]["email"]).count() == 0
    assert await identity_of(ui.served, uid) is None  # gone with the user, not left over


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
        await ui.page.get_by_label("authorization_code").check()
        await ui.page.get_by_label("First-party: skip the consent page").check()
        await ui.press("Register client", "client", {
            "#client-name": "Browser portal", "#client-scopes": "read",
            "#client-uris": "https://portal.example/cb\n"})  # fmt: skip
        cid.value = await ui.text("#client-id")
        secret.value = await ui.text("#client-secret")
        await ui.walk.check("client-secret")

    async def rotate() -> None:
        old_secret.value = secret.value
        await ui.press("Rotate the secret", "rotated")
        secret.value = await ui.text("#client-secret")

    async def edit_uris() -> None:
        await ui.page.get_by_label("First-party: skip the consent page").uncheck()
        await ui.press("Save", "client_updated",
                       {"#uris": "https://portal.example/a\nhttps://portal.example/b"})  # fmt: skip

    client_steps: list[tuple[str, Callable[[], Awaitable[Any]], Edit]] = [
        ("register a client", register, new_client(
            cid, name="Browser portal", org_id=HOME, scopes=("read",), disabled=False,
            grant_types=("client_credentials", "authorization_code"), public=False,
            redirect_uris=("https://portal.example/cb",), skip_consent=True,
            secret_hash=HashOf(secret), secret_rotated_at=None, previous_secret_hash=None)),
        ("rotate its secret", rotate, client(cid, secret_hash=HashOf(secret),
                                             secret_rotated_at=Not(None))),
        ("edit the redirect URIs and skip_consent", edit_uris, client(
            cid, redirect_uris=("https://portal.example/a", "https://portal.example/b"),
            skip_consent=False)),
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

    def shown(items: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
        return [(e["occurred_at"], e["type"], e["user_id"] or "") for e in items]

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
