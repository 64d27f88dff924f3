"""Groups over HTTP (docs/reference/accounts.md): members of the group's organization only,
a group's detail with its members, and group names unique per organization."""

from __future__ import annotations

from aiohttp.test_utils import TestClient

from tests.e2e.accounts_world import (
    HOME,
    OTHER,
    log_in_as,
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
