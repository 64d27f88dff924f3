"""Roles over HTTP (docs/reference/accounts.md): the permission matrix (``MATRIX``: every
admin endpoint × every role × a target in the caller's organization, in another organization,
or missing, with the exact status), a bearer token on every admin route, the escalation rules,
role changes applying to the next request and to refreshed tokens, and 404s outside the
organization that do not leak existence."""

from __future__ import annotations

import re
from typing import Any

import jwt
import pytest
from aiohttp.test_utils import TestClient

from domain.model import Role
from tests.e2e.accounts_world import (
    HOME,
    MISSING_ID,
    OrgFixture,
    add_passkey,
    add_user,
    log_in_as,
    login,
    make_world,
    snapshot,
)
from tests.e2e.accounts_world import base_env as base_env  # one key directory per module
from tests.e2e.accounts_world import deployment as deployment  # once per storage backend
from tests.e2e.accounts_world import shared_key_dir as shared_key_dir
from tests.e2e.helpers import (
    assert_problem,
    bearer,
)

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
