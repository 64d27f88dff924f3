"""Users, roles, groups and members over HTTP (docs/reference/accounts.md).

The permission matrix is one table (``MATRIX``): every endpoint × every role × a target in the
caller's organization, in another organization, or missing, with the exact status. Then the
escalation rules, pagination under concurrent inserts, token claims after refresh, organization
moves, 404s that do not leak existence, and bad requests that change nothing.

Users, roles and groups are set up through the container's use cases (the operator's CLI use
cases and a superadmin principal); the callers log in over HTTP.
"""

from __future__ import annotations

import asyncio
import os
import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import jwt
import pytest
from aiohttp.test_utils import TestClient

from domain.model import Role
from domain.passkeys import Passkey
from domain.policy import Principal
from entrypoints.container import Container
from tests.e2e.helpers import (
    ONE_PER_BACKEND,
    PASSWORD,
    USER_KEYS,
    assert_problem,
    bearer,
    container_of,
)

HOME = "default"
OTHER = "acme"
NOWHERE = "nowhere"
MISSING_ID = "0" * 32
ROOT = "root@example.com"


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend. Access decisions do not depend on
    the signing algorithm (every algorithm's tokens are covered by the auth and signer suites),
    and the matrix is the largest suite, so it runs on SQLite and PostgreSQL with RS256."""
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def shared_key_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One key directory for the whole module: RSA key generation runs once, not per app."""
    return tmp_path_factory.mktemp("keys") / "keys"


@pytest.fixture
def base_env(storage_env: dict[str, str], shared_key_dir: Path, algorithm: str) -> dict[str, str]:
    """As in conftest, but with the shared key directory (each test still has its own db), and
    ``read`` in ``oauth.shared_scopes`` (an org_admin's clients of ``auth.audience`` may hold
    it)."""
    return {
        "AUTHSVC_OAUTH__SHARED_SCOPES": "read",
        "AUTHSVC_AUTH__BCRYPT_ROUNDS": "4",
        "AUTHSVC_AUTH__KEY_DIR": str(shared_key_dir),
        "AUTHSVC_AUTH__ALGORITHM": algorithm,
        **storage_env,
    }


# --------------------------------------------------------------------------- the world


@attrs.frozen
class OrgFixture:
    """What one organization holds: a viewer ``target``, a ``group`` and its ``member``, an
    OAuth ``oauth_client``."""

    org_id: str
    target: str
    group: str
    member: str
    oauth_client: str
    passkey: str = MISSING_ID
    session: str = MISSING_ID


@attrs.define
class World:
    """A fresh app with a superadmin ``root``, two organizations set up and callers logged in."""

    client: TestClient
    root: Principal
    orgs: dict[str, OrgFixture]
    tokens: dict[str, str] = attrs.field(factory=dict)
    user_ids: dict[str, str] = attrs.field(factory=dict)

    @property
    def container(self) -> Container:
        return container_of(self.client)


async def add_user(client: TestClient, email: str, role: Role = Role.VIEWER,
                   org_id: str = HOME) -> str:  # fmt: skip
    """Register ``email`` and give it ``role`` and ``org_id`` through the operator's use cases."""
    container = container_of(client)
    user = await container.auth_service().register(email, PASSWORD)
    if org_id != HOME:
        await container.set_org_by_operator()(email, org_id)
    if role is not Role.VIEWER:
        await container.set_role_by_operator()(email, role)
    return user.id


async def login(client: TestClient, email: str, password: str = PASSWORD) -> dict[str, Any]:
    """Log in over HTTP; the TokenPair body."""
    resp = await client.post("/login", json={"email": email, "password": password})
    assert resp.status == 200, await resp.text()
    return await resp.json()  # type: ignore[no-any-return]


async def add_passkey(client: TestClient, user_id: str) -> str:
    """A passkey of ``user_id`` stored through the port; returns its id."""
    passkey = Passkey(uuid.uuid4().hex, user_id, os.urandom(16), b"key", 0, "0" * 36, False,
                      False, (), "laptop", datetime.now(UTC))  # fmt: skip
    async with container_of(client).storage().begin() as uow:
        await uow.passkeys.add(passkey)
        await uow.commit()
    return passkey.id


async def make_world(client: TestClient) -> World:
    """root (superadmin of ``HOME``, logged in); in ``HOME`` and ``OTHER``: a viewer target, a
    group and a member of it."""
    container = container_of(client)
    root = (await container.create_superadmin()(ROOT, PASSWORD)).user
    principal = Principal(root.id, root.role, root.org_id)
    orgs = {}
    for scope, org in (("same", HOME), ("other", OTHER)):
        target = await add_user(client, f"target@{org}.example", org_id=org)
        await login(client, f"target@{org}.example")  # a live session to list or end
        member = await add_user(client, f"member@{org}.example", org_id=org)
        group = await container.create_group()(principal, f"team-{org}", org)
        await container.add_member()(principal, group.group.id, member)
        made = await container.create_client()(principal, f"svc-{org}", ["read"], org_id=org)
        passkey = await add_passkey(client, target)
        session = (await container.list_sessions()(principal, target))[0].session.id
        orgs[scope] = OrgFixture(
            org, target, group.group.id, member, made.client.id, passkey, session
        )
    orgs["missing"] = OrgFixture(NOWHERE, MISSING_ID, MISSING_ID, MISSING_ID, MISSING_ID)
    world = World(client, principal, orgs)
    world.tokens["superadmin"] = (await login(client, ROOT))["access_token"]
    world.user_ids["superadmin"] = root.id
    return world


async def log_in_as(world: World, role: str) -> str:
    """An access token of a caller with ``role`` in ``HOME`` (root for superadmin)."""
    if role not in world.tokens:
        email = f"{role}@{HOME}.example"
        world.user_ids[role] = await add_user(world.client, email, Role(role))
        world.tokens[role] = (await login(world.client, email))["access_token"]
    return world.tokens[role]


async def snapshot(world: World) -> dict[str, Any]:
    """Every user (role, org, disabled), its live sessions, every group (name, org, members)
    and every OAuth client (org, disabled, secret hash), read through the use cases."""
    c = world.container
    listed = (await c.list_users()(world.root, limit=200)).items
    users = {u.id: (u.email, u.role, u.org_id, u.disabled) for u in listed}
    sessions = {
        u.id: [x.session.id for x in await c.list_sessions()(world.root, u.id)] for u in listed
    }
    groups = {}
    for summary in (await c.list_groups()(world.root, limit=200)).items:
        detail = await c.get_group()(world.root, summary.group.id)
        groups[summary.group.id] = (summary.group.name, summary.group.org_id,
                                    sorted(m.id for m in detail.members))  # fmt: skip
    clients = {x.id: (x.org_id, x.disabled, x.secret_hash)
               for x in (await c.list_clients()(world.root, limit=200)).items}  # fmt: skip
    passkeys = {u.id: [p.id for p in await c.passkey_admin().list(world.root, u.id)]
                for u in listed}  # fmt: skip
    return {"users": users, "groups": groups, "sessions": sessions, "clients": clients,
            "passkeys": passkeys}  # fmt: skip


# --------------------------------------------------------------------------- the matrix

ENDPOINTS: dict[str, tuple[str, str, dict[str, Any] | None]] = {
    # name: (method, path template, JSON body template); {user} {group} {member} {org} are the
    # scope's target user, group, member of that group and organization.
    "list_users": ("GET", "/users?org_id={org}", None),
    "get_user": ("GET", "/users/{user}", None),
    "set_role": ("PUT", "/users/{user}/role", {"role": "operator"}),
    "move_user": ("PATCH", "/users/{user}", {"org_id": "initech"}),
    "disable_user": ("PATCH", "/users/{user}", {"disabled": True}),
    "delete_user": ("DELETE", "/users/{user}", None),
    "list_user_sessions": ("GET", "/users/{user}/sessions", None),
    "end_user_sessions": ("DELETE", "/users/{user}/sessions", None),
    "end_user_session": ("DELETE", "/users/{user}/sessions/{session}", None),
    "list_groups": ("GET", "/groups?org_id={org}", None),
    "get_group": ("GET", "/groups/{group}", None),
    "create_group": ("POST", "/groups", {"name": "new team", "org_id": "{org}"}),
    "rename_group": ("PATCH", "/groups/{group}", {"name": "renamed"}),
    "delete_group": ("DELETE", "/groups/{group}", None),
    "add_member": ("PUT", "/groups/{group}/members/{user}", None),
    "remove_member": ("DELETE", "/groups/{group}/members/{member}", None),
    "reset_user_mfa": ("DELETE", "/users/{user}/mfa", None),
    "list_audit_events": ("GET", "/audit-events?org_id={org}", None),
    "list_user_passkeys": ("GET", "/users/{user}/passkeys", None),
    "delete_user_passkey": ("DELETE", "/users/{user}/passkeys/{passkey}", None),
    "list_clients": ("GET", "/oauth/clients?org_id={org}", None),
    "get_client": ("GET", "/oauth/clients/{client}", None),
    "create_client": (
        "POST",
        "/oauth/clients",
        {"name": "svc", "scopes": ["read"], "org_id": "{org}"},
    ),
    "update_client": ("PATCH", "/oauth/clients/{client}", {"disabled": True}),
    "delete_client": ("DELETE", "/oauth/clients/{client}", None),
    "rotate_client_secret": ("POST", "/oauth/clients/{client}/secret", None),
}

ROLES = ("viewer", "operator", "org_admin", "superadmin")
SCOPES = ("same", "other", "missing")

# Expected status per endpoint and role, for a target in the caller's organization / in another
# organization / that does not exist ("missing": an unknown id, or an unknown organization for
# the list and create endpoints). docs/reference/accounts.md: role first (403), then scope (404).
_TABLE = """
endpoint        viewer        operator      org_admin     superadmin
list_users      403 403 403   403 403 403   200 404 404   200 200 200
get_user        403 403 403   403 403 403   200 404 404   200 200 404
set_role        403 403 403   403 403 403   200 404 404   200 200 404
move_user       403 403 403   403 403 403   403 403 403   200 200 404
disable_user    403 403 403   403 403 403   200 404 404   200 200 404
delete_user     403 403 403   403 403 403   204 404 404   204 204 404
list_user_sessions 403 403 403 403 403 403  200 404 404   200 200 404
end_user_sessions 403 403 403 403 403 403   204 404 404   204 204 404
end_user_session 403 403 403 403 403 403    204 404 404   204 204 404
list_groups     200 404 404   200 404 404   200 404 404   200 200 200
get_group       200 404 404   200 404 404   200 404 404   200 200 404
create_group    403 403 403   403 403 403   201 404 404   201 201 201
rename_group    403 403 403   403 403 403   200 404 404   200 200 404
delete_group    403 403 403   403 403 403   204 404 404   204 204 404
add_member      403 403 403   403 403 403   204 404 404   204 204 404
remove_member   403 403 403   403 403 403   204 404 404   204 204 404
reset_user_mfa  403 403 403   403 403 403   204 404 404   204 204 404
list_audit_events 403 403 403 403 403 403   200 404 404   200 200 200
list_user_passkeys 403 403 403 403 403 403  200 404 404   200 200 404
delete_user_passkey 403 403 403 403 403 403 204 404 404   204 204 404
list_clients    403 403 403   403 403 403   200 404 404   200 200 200
get_client      403 403 403   403 403 403   200 404 404   200 200 404
create_client   403 403 403   403 403 403   201 404 404   201 201 201
update_client   403 403 403   403 403 403   200 404 404   200 200 404
delete_client   403 403 403   403 403 403   204 404 404   204 204 404
rotate_client_secret 403 403 403 403 403 403 200 404 404  200 200 404
"""


def _parse_table(text: str) -> dict[tuple[str, str, str], int]:
    lines = [line.split() for line in text.strip().splitlines()]
    header, rows = lines[0], lines[1:]
    assert tuple(header[1:]) == ROLES
    expected = {}
    for row in rows:
        endpoint, statuses = row[0], [int(s) for s in row[1:]]
        assert len(statuses) == len(ROLES) * len(SCOPES), endpoint
        for i, role in enumerate(ROLES):
            for j, scope in enumerate(SCOPES):
                expected[(endpoint, role, scope)] = statuses[i * len(SCOPES) + j]
    assert {e for e, _, _ in expected} == set(ENDPOINTS)
    return expected


MATRIX: dict[tuple[str, str, str], int] = _parse_table(_TABLE)
_CODES = {403: "forbidden", 404: "not_found"}


def _fill(template: Any, org: OrgFixture) -> Any:
    values = {"user": org.target, "group": org.group, "member": org.member, "org": org.org_id,
              "client": org.oauth_client, "passkey": org.passkey,
              "session": org.session}  # fmt: skip
    if isinstance(template, str):
        return template.format(**values)
    if isinstance(template, dict):
        return {k: _fill(v, org) for k, v in template.items()}
    return template


@pytest.mark.parametrize(
    ("case", "status"),
    sorted(MATRIX.items()),
    ids=lambda v: "-".join(v) if isinstance(v, tuple) else str(v),
)
async def test_permission_matrix(
    client: TestClient, case: tuple[str, str, str], status: int
) -> None:
    endpoint, role, scope = case
    world = await make_world(client)
    token = await log_in_as(world, role)
    method, path, body = ENDPOINTS[endpoint]
    org = world.orgs[scope]
    before = await snapshot(world)

    resp = await client.request(method, _fill(path, org), json=_fill(body, org),
                                headers=bearer(token))  # fmt: skip

    if status in _CODES:
        await assert_problem(resp, status, _CODES[status])
        assert await snapshot(world) == before, "a refused request changed state"
        return
    assert resp.status == status, await resp.text()
    if status == 204:
        assert await resp.read() == b""
    else:
        data = await resp.json()
        if endpoint == "list_user_sessions":
            assert [x["id"] for x in data["items"]] == before["sessions"][org.target]
            assert len(data["items"]) == 1
        elif endpoint == "list_user_passkeys":
            assert [x["id"] for x in data["items"]] == before["passkeys"][org.target] != []
        elif endpoint.startswith("list_"):
            assert set(data) == {"items", "next_cursor"}
            expected_org = org.org_id
            assert all(item["org_id"] == expected_org for item in data["items"])
    after = await snapshot(world)
    if endpoint == "set_role":
        assert after["users"][org.target][1] is Role.OPERATOR
    elif endpoint == "move_user":
        assert after["users"][org.target][2] == "initech"
    elif endpoint == "disable_user":
        assert after["users"][org.target][3] is True
        assert after["sessions"][org.target] == []  # disabling ended its session
    elif endpoint == "delete_user":
        assert org.target not in after["users"]
    elif endpoint in ("end_user_sessions", "end_user_session"):
        assert after["sessions"][org.target] == [] != before["sessions"][org.target]
    elif endpoint == "create_group":
        assert len(after["groups"]) == len(before["groups"]) + 1
    elif endpoint == "rename_group":
        assert after["groups"][org.group][0] == "renamed"
    elif endpoint == "delete_group":
        assert org.group not in after["groups"]
    elif endpoint == "add_member":
        assert org.target in after["groups"][org.group][2]
    elif endpoint == "remove_member":
        assert org.member not in after["groups"][org.group][2]
    elif endpoint == "delete_user_passkey":
        assert after["passkeys"][org.target] == [] != before["passkeys"][org.target]
    elif endpoint == "create_client":
        assert len(after["clients"]) == len(before["clients"]) + 1
        assert data["client_secret"] and resp.headers["Cache-Control"] == "no-store"
    elif endpoint == "update_client":
        assert after["clients"][org.oauth_client][1] is True
    elif endpoint == "delete_client":
        assert org.oauth_client not in after["clients"]
    elif endpoint == "rotate_client_secret":
        new, old = after["clients"][org.oauth_client][2], before["clients"][org.oauth_client][2]
        assert new != old and data["client_secret"]
    else:
        assert after == before


def test_the_matrix_covers_every_admin_route() -> None:
    from entrypoints.http import (
        admin_routes,
        audit_routes,
        client_routes,
        mfa_routes,
        passkey_routes,
        session_routes,
    )

    ROUTES = [*admin_routes.ROUTES, *audit_routes.ROUTES, *client_routes.ROUTES,
              *(r for m in (session_routes, mfa_routes, passkey_routes) for r in m.ROUTES
                if r.path.startswith("/users/"))]  # fmt: skip

    def shape(path: str) -> str:
        return re.sub(r"\{\w+\}", "{}", path.split("?")[0])

    routed = {(spec.method, shape(spec.path)) for spec in ROUTES}
    tested = {(method, shape(path)) for method, path, _ in ENDPOINTS.values()}
    assert routed == tested
    assert len(MATRIX) == len(ENDPOINTS) * len(ROLES) * len(SCOPES)


@pytest.mark.parametrize("endpoint", sorted(ENDPOINTS))
async def test_every_admin_route_needs_a_bearer_token(client: TestClient, endpoint: str) -> None:
    method, path, body = ENDPOINTS[endpoint]
    org = OrgFixture(HOME, MISSING_ID, MISSING_ID, MISSING_ID, MISSING_ID)
    resp = await client.request(method, _fill(path, org), json=_fill(body, org))
    await assert_problem(resp, 401, "invalid_token")
    assert resp.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'
    resp = await client.request(method, _fill(path, org), json=_fill(body, org),
                                headers=bearer("not.a.jwt"))  # fmt: skip
    await assert_problem(resp, 401, "invalid_token")


# --------------------------------------------------------------------------- escalation


async def test_org_admin_escalation_rules(client: TestClient) -> None:
    world = await make_world(client)
    token = await log_in_as(world, "org_admin")
    me = world.user_ids["org_admin"]
    target = world.orgs["same"].target
    peer = await add_user(client, "peer@default.example", Role.ORG_ADMIN)
    before = await snapshot(world)

    cases = [
        (target, "superadmin"),  # may not grant superadmin
        (world.root.user_id, "viewer"),  # may not change a superadmin
        (world.root.user_id, "superadmin"),  # not even to the role it holds
        (me, "viewer"),  # may not change its own role
        (me, "org_admin"),  # not even to the role it holds
    ]
    for user_id, role in cases:
        resp = await client.put(f"/users/{user_id}/role", json={"role": role},
                                headers=bearer(token))  # fmt: skip
        await assert_problem(resp, 403, "forbidden")
    assert await snapshot(world) == before

    for user_id, role in [(target, "org_admin"), (peer, "operator")]:
        resp = await client.put(f"/users/{user_id}/role", json={"role": role},
                                headers=bearer(token))  # fmt: skip
        assert resp.status == 200, await resp.text()
        assert (await resp.json())["role"] == role


async def test_org_admin_manages_no_factors_of_a_superadmin_nor_its_own(
    client: TestClient,
) -> None:
    """docs/reference/mfa-and-passkeys.md: the admin passkey and MFA routes follow the
    user-management rule of section 3 — an org_admin lists and changes nothing of a superadmin's (in
    its own organization too), and acts on itself only through /me; another org_admin's it may."""
    world = await make_world(client)
    token = await log_in_as(world, "org_admin")
    me = world.user_ids["org_admin"]
    peer = await add_user(client, "peer@default.example", Role.ORG_ADMIN)
    keys = {uid: await add_passkey(client, uid) for uid in (world.root.user_id, me, peer)}
    routes = [("GET", "/users/{u}/passkeys"), ("DELETE", "/users/{u}/passkeys/{p}"),
              ("DELETE", "/users/{u}/mfa")]  # fmt: skip
    before = await snapshot(world)
    for user_id in (world.root.user_id, me):
        for method, path in routes:
            resp = await client.request(method, path.format(u=user_id, p=keys[user_id]),
                                        headers=bearer(token))  # fmt: skip
            await assert_problem(resp, 403, "forbidden")
    assert await snapshot(world) == before
    for method, path in routes:
        resp = await client.request(method, path.format(u=peer, p=keys[peer]),
                                    headers=bearer(token))  # fmt: skip
        assert resp.status in (200, 204), await resp.text()
    root = bearer(world.tokens["superadmin"])
    resp = await client.get(f"/users/{world.root.user_id}/passkeys", headers=root)
    assert [p["id"] for p in (await resp.json())["items"]] == [keys[world.root.user_id]]


async def test_last_superadmin_cannot_be_demoted(client: TestClient) -> None:
    world = await make_world(client)
    token = world.tokens["superadmin"]
    resp = await client.put(f"/users/{world.root.user_id}/role", json={"role": "org_admin"},
                            headers=bearer(token))  # fmt: skip
    body = await assert_problem(resp, 409, "last_superadmin")
    assert "last superadmin" in body["detail"]

    # With a second superadmin, the first may step down; then the second is the last one.
    second = world.orgs["other"].target
    resp = await client.put(f"/users/{second}/role", json={"role": "superadmin"},
                            headers=bearer(token))  # fmt: skip
    assert resp.status == 200
    resp = await client.put(f"/users/{world.root.user_id}/role", json={"role": "viewer"},
                            headers=bearer(token))  # fmt: skip
    assert resp.status == 200 and (await resp.json())["role"] == "viewer"
    # The principal comes from the user record, not the token: root's token no longer admin.
    resp = await client.get("/users", headers=bearer(token))
    await assert_problem(resp, 403, "forbidden")
    second_token = (await login(client, "target@acme.example"))["access_token"]
    resp = await client.put(f"/users/{second}/role", json={"role": "viewer"},
                            headers=bearer(second_token))  # fmt: skip
    await assert_problem(resp, 409, "last_superadmin")


async def test_member_from_another_org_is_422_for_a_superadmin(client: TestClient) -> None:
    world = await make_world(client)
    before = await snapshot(world)
    resp = await client.put(
        f"/groups/{world.orgs['same'].group}/members/{world.orgs['other'].target}",
        headers=bearer(world.tokens["superadmin"]),
    )
    body = await assert_problem(resp, 422, "validation_error")
    assert [e["field"] for e in body["errors"]] == ["user_id"]
    assert await snapshot(world) == before
    # An org_admin does not even learn that the user exists.
    token = await log_in_as(world, "org_admin")
    resp = await client.put(
        f"/groups/{world.orgs['same'].group}/members/{world.orgs['other'].target}",
        headers=bearer(token),
    )
    await assert_problem(resp, 404, "not_found")


async def test_role_changes_apply_to_the_next_request(client: TestClient) -> None:
    world = await make_world(client)
    token = await log_in_as(world, "viewer")
    resp = await client.get("/users", headers=bearer(token))
    await assert_problem(resp, 403, "forbidden")
    resp = await client.put(f"/users/{world.user_ids['viewer']}/role", json={"role": "org_admin"},
                            headers=bearer(world.tokens["superadmin"]))  # fmt: skip
    assert resp.status == 200
    resp = await client.get("/users", headers=bearer(token))  # same token, claims say viewer
    assert resp.status == 200


# --------------------------------------------------------------------------- pagination


async def test_pagination_walks_to_the_end_while_users_are_inserted(client: TestClient) -> None:
    world = await make_world(client)
    for i in range(40):
        await add_user(client, f"user{i:02}@default.example")
    token = world.tokens["superadmin"]
    initial = set((await snapshot(world))["users"])
    inserted: list[str] = []

    first_page = asyncio.Event()
    inserted_during_walk = 0

    async def insert() -> None:
        await first_page.wait()
        for i in range(30):
            resp = await client.post("/register", json={"email": f"late{i:02}@default.example",
                                                        "password": PASSWORD})  # fmt: skip
            assert resp.status == 201
            inserted.append((await resp.json())["id"])
            await asyncio.sleep(0)

    async def walk() -> list[str]:
        seen: list[str] = []
        cursor: str | None = None
        while True:
            query = "/users?limit=4" + (f"&cursor={cursor}" if cursor else "")
            resp = await client.get(query, headers=bearer(token))
            assert resp.status == 200, await resp.text()
            page = await resp.json()
            assert len(page["items"]) <= 4
            seen.extend(item["id"] for item in page["items"])
            first_page.set()
            cursor = page["next_cursor"]
            if cursor is None:
                nonlocal inserted_during_walk
                inserted_during_walk = len(inserted)
                return seen
            await asyncio.sleep(0)

    seen, _ = await asyncio.gather(walk(), insert())
    assert len(seen) == len(set(seen)), "a user was listed twice"
    assert initial <= set(seen), "a user that existed at the start was skipped"
    assert seen == sorted(seen)
    assert set(seen) <= initial | set(inserted)
    assert len(inserted) == 30
    assert inserted_during_walk > 0, "the inserts did not overlap the walk"


async def test_org_admin_lists_only_its_organization(client: TestClient) -> None:
    world = await make_world(client)
    token = await log_in_as(world, "org_admin")
    for own in ("", f"&org_id={HOME}"):
        resp = await client.get(f"/users?limit=200{own}", headers=bearer(token))
        assert resp.status == 200
        items = (await resp.json())["items"]
        assert items and {u["org_id"] for u in items} == {HOME}
        assert all(set(u) == USER_KEYS for u in items)
    resp = await client.get("/groups", headers=bearer(token))
    assert [g["id"] for g in (await resp.json())["items"]] == [world.orgs["same"].group]
    resp = await client.get("/groups", headers=bearer(world.tokens["superadmin"]))
    assert {g["org_id"] for g in (await resp.json())["items"]} == {HOME, OTHER}


async def test_group_detail_lists_its_members(client: TestClient) -> None:
    world = await make_world(client)
    org = world.orgs["same"]
    token = await log_in_as(world, "viewer")
    resp = await client.get(f"/groups/{org.group}", headers=bearer(token))
    assert resp.status == 200
    body = await resp.json()
    assert set(body) == {"id", "name", "org_id", "member_count", "created_at", "members"}
    assert body["members"] == [{"id": org.member, "email": "member@default.example"}]
    assert body["member_count"] == 1 and body["org_id"] == HOME
    # PUT is idempotent
    for _ in range(2):
        resp = await client.put(f"/groups/{org.group}/members/{org.member}",
                                headers=bearer(world.tokens["superadmin"]))  # fmt: skip
        assert resp.status == 204
    resp = await client.get(f"/groups/{org.group}", headers=bearer(token))
    assert (await resp.json())["member_count"] == 1


# --------------------------------------------------------------------------- token claims


def _claims(token: str) -> dict[str, Any]:
    return jwt.decode(token, options={"verify_signature": False})


async def test_refreshed_token_carries_new_groups_and_role(client: TestClient) -> None:
    world = await make_world(client)
    org = world.orgs["same"]
    pair = await login(client, "target@default.example")
    assert _claims(pair["access_token"])["groups"] == []
    assert _claims(pair["access_token"])["role"] == "viewer"

    admin = bearer(world.tokens["superadmin"])
    resp = await client.put(f"/groups/{org.group}/members/{org.target}", headers=admin)
    assert resp.status == 204
    resp = await client.put(f"/users/{org.target}/role", json={"role": "operator"}, headers=admin)
    assert resp.status == 200

    resp = await client.post("/refresh", json={"refresh_token": pair["refresh_token"]})
    assert resp.status == 200
    claims = _claims((await resp.json())["access_token"])
    assert claims["groups"] == [org.group]
    assert claims["role"] == "operator"


# --------------------------------------------------------------------------- moves


async def test_moving_a_user_drops_its_old_memberships(client: TestClient) -> None:
    world = await make_world(client)
    org = world.orgs["same"]
    pair = await login(client, "member@default.example")
    resp = await client.get("/me", headers=bearer(pair["access_token"]))
    assert (await resp.json())["groups"] == [org.group]

    resp = await client.patch(f"/users/{org.member}", json={"org_id": OTHER},
                              headers=bearer(world.tokens["superadmin"]))  # fmt: skip
    assert resp.status == 200
    body = await resp.json()
    assert body["org_id"] == OTHER and body["id"] == org.member

    resp = await client.get(f"/groups/{org.group}", headers=bearer(world.tokens["superadmin"]))
    group = await resp.json()
    assert group["members"] == [] and group["member_count"] == 0
    resp = await client.get("/me", headers=bearer(pair["access_token"]))
    me = await resp.json()
    assert me["groups"] == [] and me["org_id"] == OTHER
    # Now in OTHER, it can join OTHER's group, and sees only OTHER's groups.
    resp = await client.put(f"/groups/{world.orgs['other'].group}/members/{org.member}",
                            headers=bearer(world.tokens["superadmin"]))  # fmt: skip
    assert resp.status == 204
    resp = await client.get("/groups", headers=bearer(pair["access_token"]))
    assert [g["id"] for g in (await resp.json())["items"]] == [world.orgs["other"].group]


# --------------------------------------------------------------------------- 404s


async def test_outside_the_organization_looks_exactly_like_missing(client: TestClient) -> None:
    world = await make_world(client)
    token = bearer(await log_in_as(world, "org_admin"))
    foreign, missing = world.orgs["other"], world.orgs["missing"]
    requests = [
        ("GET", "/users/{user}", None),
        ("PUT", "/users/{user}/role", {"role": "viewer"}),
        ("GET", "/groups/{group}", None),
        ("PATCH", "/groups/{group}", {"name": "x"}),
        ("DELETE", "/groups/{group}", None),
        ("PUT", "/groups/{group}/members/{member}", None),
        ("DELETE", "/groups/{group}/members/{member}", None),
        ("GET", "/users?org_id={org}", None),
        ("GET", "/groups?org_id={org}", None),
        ("POST", "/groups", {"name": "x", "org_id": "{org}"}),
    ]
    for method, path, body in requests:
        bodies = []
        for org in (foreign, missing):
            resp = await client.request(method, _fill(path, org), json=_fill(body, org),
                                        headers=token)  # fmt: skip
            bodies.append(await assert_problem(resp, 404, "not_found"))
        assert bodies[0] == bodies[1], (method, path)


# --------------------------------------------------------------------------- bad requests


def _bad_requests(org: OrgFixture) -> Iterator[tuple[str, str, dict[str, Any], int, str | None]]:
    """(method, path, request kwargs, status, field named in ``errors`` or None)."""
    role, move = f"/users/{org.target}/role", f"/users/{org.target}"
    group = f"/groups/{org.group}"
    json_type = {"Content-Type": "application/json"}
    yield "PUT", role, {"data": b"{not json", "headers": json_type}, 400, None
    yield "PUT", role, {"data": b"\xff\xfe", "headers": json_type}, 400, None
    yield "PUT", role, {"json": ["operator"]}, 400, None
    yield "PUT", role, {"data": b'{"role": "operator"}',
                        "headers": {"Content-Type": "text/plain"}}, 400, None  # fmt: skip
    yield "PUT", role, {"json": {}}, 422, "role"
    yield "PUT", role, {"json": {"role": "god"}}, 422, "role"
    yield "PUT", role, {"json": {"role": 3}}, 422, "role"
    yield "PUT", role, {"json": {"role": None}}, 422, "role"
    yield "PATCH", move, {"json": {}}, 422, "org_id"
    yield "PATCH", move, {"json": {}}, 422, "disabled"
    yield "PATCH", move, {"json": {"disabled": "yes"}}, 422, "disabled"
    yield "PATCH", move, {"json": {"disabled": 1}}, 422, "disabled"
    yield "PATCH", move, {"json": {"disabled": True, "org_id": ""}}, 422, "org_id"
    yield "PATCH", move, {"json": {"org_id": ""}}, 422, "org_id"
    yield "PATCH", move, {"json": {"org_id": " acme"}}, 422, "org_id"
    yield "PATCH", move, {"json": {"org_id": 5}}, 422, "org_id"
    yield "PATCH", move, {"json": {"org_id": "x" * 129}}, 422, "org_id"
    yield "PATCH", move, {"data": b"null", "headers": json_type}, 400, None
    yield "POST", "/groups", {"json": {}}, 422, "name"
    yield "POST", "/groups", {"json": {"name": ""}}, 422, "name"
    yield "POST", "/groups", {"json": {"name": "   "}}, 422, "name"
    yield "POST", "/groups", {"json": {"name": "x" * 101}}, 422, "name"
    yield "POST", "/groups", {"json": {"name": "a\x00b"}}, 422, "name"
    yield "POST", "/groups", {"json": {"name": 7}}, 422, "name"
    yield "POST", "/groups", {"json": {"name": "ok", "org_id": 7}}, 422, "org_id"
    yield "POST", "/groups", {"json": {"name": "ok", "org_id": ""}}, 422, "org_id"
    yield "POST", "/groups", {"json": {"name": "x" * 70_000}}, 413, None
    yield "PATCH", group, {"json": {"name": ""}}, 422, "name"
    yield "PATCH", group, {"json": {"name": ["a"]}}, 422, "name"
    yield "PATCH", group, {"data": b"", "headers": json_type}, 400, None
    for query in ("abc", "0", "201", "-1", "1.5", "", "1e2", "٣"):
        yield "GET", f"/users?limit={query}", {}, 422, "limit"
        yield "GET", f"/groups?limit={query}", {}, 422, "limit"
    yield "GET", "/users?cursor=garbage", {}, 422, "cursor"
    yield "GET", "/groups?cursor=", {}, 422, "cursor"


async def test_bad_requests_are_problems_and_change_nothing(client: TestClient) -> None:
    world = await make_world(client)
    token = bearer(world.tokens["superadmin"])
    before = await snapshot(world)
    for method, path, kwargs, status, field in _bad_requests(world.orgs["same"]):
        headers = {**token, **kwargs.pop("headers", {})}
        resp = await client.request(method, path, headers=headers, **kwargs)
        code = {400: "malformed_body", 413: "body_too_large", 422: "validation_error"}[status]
        body = await assert_problem(resp, status, code)
        if field is not None:
            assert field in [e["field"] for e in body["errors"]], (method, path, body)
    assert await snapshot(world) == before


async def test_a_cursor_of_another_listing_is_refused(client: TestClient) -> None:
    world = await make_world(client)
    token = bearer(world.tokens["superadmin"])
    resp = await client.get("/groups?limit=1", headers=token)
    cursor = (await resp.json())["next_cursor"]
    assert cursor is not None
    resp = await client.get(f"/users?cursor={cursor}", headers=token)
    body = await assert_problem(resp, 422, "validation_error")
    assert body["errors"][0]["field"] == "cursor"
    resp = await client.get(f"/groups?limit=1&cursor={cursor}", headers=token)
    page = await resp.json()
    assert resp.status == 200 and page["next_cursor"] is None and len(page["items"]) == 1


async def test_duplicate_group_name_is_409(client: TestClient) -> None:
    world = await make_world(client)
    token = bearer(await log_in_as(world, "org_admin"))
    resp = await client.post("/groups", json={"name": f"team-{HOME}"}, headers=token)
    await assert_problem(resp, 409, "conflict")
    resp = await client.post("/groups", json={"name": "second"}, headers=token)
    assert resp.status == 201
    created = await resp.json()
    assert set(created) == {"id", "name", "org_id", "member_count", "created_at"}
    assert created["org_id"] == HOME and created["member_count"] == 0
    resp = await client.patch(f"/groups/{created['id']}", json={"name": f"team-{HOME}"},
                              headers=token)  # fmt: skip
    await assert_problem(resp, 409, "conflict")
    # The same name in another organization is fine (superadmin).
    resp = await client.post("/groups", json={"name": "second", "org_id": OTHER},
                             headers=bearer(world.tokens["superadmin"]))  # fmt: skip
    assert resp.status == 201 and (await resp.json())["org_id"] == OTHER


async def test_openapi_describes_the_admin_routes(client: TestClient) -> None:
    resp = await client.get("/openapi.json")
    doc = await resp.json()
    op = doc["paths"]["/users"]["get"]
    assert op["tags"] == ["admin"] and op["security"] == [{"bearerAuth": []}]
    assert {p["name"] for p in op["parameters"]} == {"limit", "cursor", "org_id"}
    op = doc["paths"]["/groups/{id}/members/{user_id}"]["put"]
    assert {(p["name"], p["in"]) for p in op["parameters"]} == {("id", "path"),
                                                                ("user_id", "path")}  # fmt: skip
    assert set(op["responses"]) == {"204", "401", "403", "404", "422", "503"}
    op = doc["paths"]["/users/{id}/role"]["put"]
    assert op["requestBody"]["content"]["application/json"]["schema"]["required"] == ["role"]
