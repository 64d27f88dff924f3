"""The admin console's browser harness (``test_admin_console_browser``): the world's state
before and after a step and the expected edits (``state``, ``user``, ``sessions``, ``group``,
``client``, ``gone`` ...), one role's browser context (``Console``: sign in, click, check a step
against the state and over the JSON API, axe-core and a screenshot per page), and the shared
steps (``user_actions``). docs/reference/accounts.md and docs/reference/console.md."""

from __future__ import annotations

import base64
import copy
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any
from unittest.mock import ANY

import attrs
import pyotp
from aiohttp.test_utils import TestClient
from playwright.async_api import Browser

from adapters.i18n.catalogs import translations
from application.shared.steps import hash_token
from domain.clients import Client
from domain.federation import FederatedIdentity
from domain.model import Role
from entrypoints.http.console.web import DONE
from tests.e2e.accounts_world import HOME, World, log_in_as, login, snapshot
from tests.e2e.accounts_world import (
    shared_key_dir as shared_key_dir,  # one RSA key per module
)
from tests.e2e.helpers import PASSWORD, bearer
from tests.e2e.walk import Walk

SELECTS = ("#new-role", "#type")  # the console's <select> fields
EMAILS = {"org_admin": f"org_admin@{HOME}.example", "superadmin": "root@example.com",
          "viewer": f"viewer@{HOME}.example", "operator": f"operator@{HOME}.example"}  # fmt: skip


@attrs.frozen
class Served:
    """The app on a real port (the browser's origin is its issuer) and its world."""

    client: TestClient
    world: World
    base: str


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


class Console:
    """A role at the console in its own browser context (its ``walk``): page actions, each a
    ``step`` checked against the world's state and over the JSON API with the caller's bearer
    ``token``."""

    def __init__(self, served: Served, walk: Walk, token: str, locale: str = "en") -> None:
        self.served, self.client, self.world, self.base = (served, served.client, served.world,
                                                           served.base)  # fmt: skip
        self.walk, self.page, self.token = walk, walk.page, token
        self.say = translations(locale).gettext
        """The console's words in the walk's ``locale`` (its catalog's ``gettext``)."""

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
            await self.page.get_by_role("button", name=self.say(button), exact=True).click()
        await self.page.wait_for_url(f"**done={done}")
        assert await self.page.locator("p.done").inner_text() == DONE[done].translated(self.say)

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
