"""Users over HTTP (docs/reference/accounts.md): pagination under concurrent inserts, an
org_admin's listing, organization moves, bad requests that change nothing, cursors of another
listing, and the OpenAPI description of the admin routes."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

from aiohttp.test_utils import TestClient

from tests.e2e.accounts_world import (
    HOME,
    OTHER,
    OrgFixture,
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
    PASSWORD,
    USER_KEYS,
    assert_problem,
    bearer,
)


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
