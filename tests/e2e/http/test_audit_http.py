"""``GET /audit-events`` over HTTP (docs/reference/operations.md), on SQLite and PostgreSQL: who
sees which rows (org_admin its organization, superadmin every one; viewer and operator none), the
filters, keyset pagination that walks every row once while rows are being written, bad input refused
with 422 naming the parameter, and retention purging old rows while serving."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import attrs
import pytest
from aiohttp.test_utils import TestClient

from application.shared.pagination import encode_cursor
from domain.audit import AuditEvent, AuditQuery, new_audit_id
from tests.e2e.helpers import (
    ONE_PER_BACKEND,
    PASSWORD,
    MakeClient,
    assert_problem,
    bearer,
    container_of,
)

ROOT = "root@example.com"
OTHER_ORG = "globex"


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend (the listing does not depend on the
    signing algorithm)."""
    return request.param  # type: ignore[no-any-return]


@attrs.define
class Org:
    """The people of the test: a superadmin, and in each organization an org_admin, an
    operator and a viewer (the second organization is ``OTHER_ORG``)."""

    client: TestClient
    tokens: dict[str, str] = attrs.Factory(dict)
    ids: dict[str, str] = attrs.Factory(dict)
    home_org: str = ""

    async def login(self, email: str) -> str:
        resp = await self.client.post("/login", json={"email": email, "password": PASSWORD})
        assert resp.status == 200, await resp.text()
        return (await resp.json())["access_token"]  # type: ignore[no-any-return]

    async def get(self, who: str, query: str = "") -> Any:
        return await self.client.get(f"/audit-events{query}", headers=bearer(self.tokens[who]))

    async def page(self, who: str, query: str = "") -> dict[str, Any]:
        resp = await self.get(who, query)
        assert resp.status == 200, await resp.text()
        return await resp.json()  # type: ignore[no-any-return]


async def _people(client: TestClient) -> Org:
    """Register ``admin``/``operator``/``viewer`` in the home organization and ``admin2``/
    ``viewer2`` moved to ``OTHER_ORG``; roles set by the superadmin ``root`` over HTTP."""
    org = Org(client)
    org.ids["root"] = (await container_of(client).create_superadmin()(ROOT, PASSWORD)).user.id
    org.tokens["root"] = root = await org.login(ROOT)
    for name, role, where in (
        ("admin", "org_admin", None),
        ("operator", "operator", None),
        ("viewer", "viewer", None),
        ("admin2", "org_admin", OTHER_ORG),
        ("viewer2", "viewer", OTHER_ORG),
    ):
        email = f"{name}@example.com"
        resp = await client.post("/register", json={"email": email, "password": PASSWORD})
        assert resp.status == 201, await resp.text()
        user = await resp.json()
        org.ids[name], org.home_org = user["id"], org.home_org or user["org_id"]
        if where is not None:
            resp = await client.patch(
                f"/users/{user['id']}", json={"org_id": where}, headers=bearer(root)
            )
            assert resp.status == 200, await resp.text()
        if role != "viewer":
            resp = await client.put(
                f"/users/{user['id']}/role", json={"role": role}, headers=bearer(root)
            )
            assert resp.status == 200, await resp.text()
        org.tokens[name] = await org.login(email)
    return org


async def _stored(client: TestClient, query: AuditQuery | None = None) -> list[AuditEvent]:
    async with container_of(client).storage().begin() as uow:
        return await uow.audit.list_page(query or AuditQuery(), None, 100_000)


async def _walk(org: Org, who: str, query: str, limit: int) -> list[dict[str, Any]]:
    """Every item of the listing, page by page (``limit`` per page)."""
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        sep = "&" if query else ""
        more = f"&cursor={quote(cursor)}" if cursor else ""
        page = await org.page(who, f"?{query}{sep}limit={limit}{more}")
        assert len(page["items"]) <= limit
        items.extend(page["items"])
        if page["next_cursor"] is None:
            return items
        cursor = page["next_cursor"]


async def test_each_admin_sees_its_own_organization_and_roles_below_see_nothing(
    make_client: MakeClient,
) -> None:
    client = await make_client()
    org = await _people(client)

    mine = await _walk(org, "admin", "", 200)
    assert mine and {e["org_id"] for e in mine} == {org.home_org}
    assert {e["user_id"] for e in mine} >= {org.ids["admin"], org.ids["viewer"]}
    assert set(mine[0]) == {"id", "type", "occurred_at", "actor_id", "user_id", "org_id",
                            "client_address", "user_agent", "details"}  # fmt: skip
    theirs = await _walk(org, "admin2", "", 200)
    assert theirs and {e["org_id"] for e in theirs} == {OTHER_ORG}
    assert {e["user_id"] for e in theirs} >= {org.ids["admin2"], org.ids["viewer2"]}

    everything = await _walk(org, "root", "", 200)
    assert {e["id"] for e in everything} == {r.id for r in await _stored(client)}
    assert {e["id"] for e in mine} | {e["id"] for e in theirs} <= {e["id"] for e in everything}
    only_other = await _walk(org, "root", f"org_id={OTHER_ORG}", 200)
    assert [e["id"] for e in only_other] == [e["id"] for e in theirs]

    # Another organization's org_id: 404 for an org_admin (existing or not); own is fine.
    await assert_problem(await org.get("admin", f"?org_id={OTHER_ORG}"), 404, "not_found")
    await assert_problem(await org.get("admin", "?org_id=nowhere"), 404, "not_found")
    assert (await org.page("admin", f"?org_id={org.home_org}"))["items"]
    for who in ("viewer", "operator", "viewer2"):
        await assert_problem(await org.get(who), 403, "forbidden")
    await assert_problem(await client.get("/audit-events"), 401, "invalid_token")
    resp = await client.get("/audit-events", headers=bearer("not.a.token"))
    await assert_problem(resp, 401, "invalid_token")


async def test_rows_are_newest_first_with_where_the_request_came_from(
    make_client: MakeClient,
) -> None:
    client = await make_client({"AUTHSVC_SERVER__TRUSTED_PROXIES": "127.0.0.1/32"})
    org = await _people(client)
    agent = "audit-http-test/2.0"
    resp = await client.post(
        "/login",
        json={"email": "viewer@example.com", "password": "not the password"},
        headers={"User-Agent": agent, "X-Forwarded-For": "198.51.100.23"},
    )
    assert resp.status == 401
    page = await org.page("admin", "?type=login.failed")
    failed = page["items"][0]
    assert failed["user_id"] == org.ids["viewer"]
    assert (failed["client_address"], failed["user_agent"]) == ("198.51.100.23", agent)
    assert failed["details"] == {"reason": "wrong_password", "method": "password"}
    assert failed["actor_id"] is None
    everything = await _walk(org, "root", "", 7)
    ids = [e["id"] for e in everything]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids)
    times = [datetime.fromisoformat(e["occurred_at"]) for e in everything]
    assert times == sorted(times, reverse=True)


async def test_filters_by_user_type_and_time(make_client: MakeClient) -> None:
    client = await make_client()
    org = await _people(client)
    viewer = org.ids["viewer"]

    by_user = await _walk(org, "admin", f"user_id={viewer}", 200)
    assert by_user and {e["user_id"] for e in by_user} == {viewer}
    assert {"user.registered", "login.succeeded"} <= {e["type"] for e in by_user}
    logins = await _walk(org, "root", "type=login.succeeded", 200)
    assert {e["type"] for e in logins} == {"login.succeeded"}
    assert {e["user_id"] for e in logins} == set(org.ids.values())
    both = await _walk(org, "admin", f"user_id={viewer}&type=login.succeeded", 200)
    assert [e["user_id"] for e in both] == [viewer]

    # since: rows at or after it (RFC 3339 with a zone; Z and offsets alike).
    newest = (await org.page("root", "?limit=1"))["items"][0]
    since = quote(newest["occurred_at"])
    assert newest["id"] in {e["id"] for e in await _walk(org, "root", f"since={since}", 200)}
    later = quote((datetime.now(UTC) + timedelta(hours=1)).isoformat())
    assert (await org.page("root", f"?since={later}"))["items"] == []
    earlier = quote((datetime.now(UTC) - timedelta(hours=1)).astimezone().isoformat())
    assert len(await _walk(org, "root", f"since={earlier}", 200)) == len(await _stored(client))
    # A user moved to another organization: its earlier rows stay with the organization
    # they happened in (the registration); what happened after the move is not listed.
    moved = await _walk(org, "admin", f"user_id={org.ids['viewer2']}", 200)
    assert [e["type"] for e in moved] == ["user.registered"]
    after = await _walk(org, "admin2", f"user_id={org.ids['viewer2']}", 200)
    assert {"user.moved", "login.succeeded"} <= {e["type"] for e in after}
    assert "user.registered" not in {e["type"] for e in after}


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("limit=0", "limit"),
        ("limit=201", "limit"),
        ("limit=ten", "limit"),
        ("cursor=not-a-cursor", "cursor"),
        (f"cursor={encode_cursor('users', 'f' * 32)}", "cursor"),  # another listing's cursor
        ("type=user.exploded", "type"),
        ("since=yesterday", "since"),
        ("since=2026-01-01T00:00:00", "since"),  # no time zone
        ("user_id=" + "a" * 65, "user_id"),
        ("user_id=a%00b", "user_id"),
    ],
)
async def test_bad_query_values_are_422_naming_the_parameter(
    make_client: MakeClient, query: str, field: str
) -> None:
    client = await make_client()
    await container_of(client).create_superadmin()(ROOT, PASSWORD)
    resp = await client.post("/login", json={"email": ROOT, "password": PASSWORD})
    token = (await resp.json())["access_token"]
    resp = await client.get(f"/audit-events?{query}", headers=bearer(token))
    body = await assert_problem(resp, 422, "validation_error")
    assert [e["field"] for e in body["errors"]] == [field]
    assert (await client.get("/audit-events", headers=bearer(token))).status == 200


async def test_a_walk_sees_every_row_once_while_rows_are_written(make_client: MakeClient) -> None:
    client = await make_client()
    org = await _people(client)
    for _ in range(6):  # some more rows to page through
        await org.login("viewer@example.com")
    before = {r.id for r in await _stored(client)}
    assert len(before) > 20

    stop = asyncio.Event()

    async def write() -> int:
        written = 0
        while not stop.is_set():
            resp = await client.post(
                "/login", json={"email": "viewer@example.com", "password": "wrong password"}
            )
            assert resp.status in (401, 429)
            written += 1
        return written

    writer = asyncio.create_task(write())
    try:
        walked = await _walk(org, "root", "", 3)
    finally:
        stop.set()
        written = await writer
    ids = [e["id"] for e in walked]
    assert len(ids) == len(set(ids)), "a row appeared twice"
    assert ids == sorted(ids, reverse=True)
    assert before <= set(ids), "a row that existed before the walk was skipped"
    assert written > 0


async def test_old_rows_are_purged_while_serving(make_client: MakeClient) -> None:
    client = await make_client(
        {"AUTHSVC_STORAGE__PURGE_INTERVAL": "1", "AUTHSVC_AUDIT__RETENTION_DAYS": "1"}
    )
    org = await _people(client)
    old_time = datetime.now(UTC) - timedelta(days=2)
    old = AuditEvent(new_audit_id(old_time), "user.enabled", old_time, org.ids["root"],
                     org.ids["viewer"], org.home_org)  # fmt: skip
    async with container_of(client).storage().begin() as uow:
        await uow.audit.record(old)
        await uow.commit()
    recent = {r.id for r in await _stored(client)} - {old.id}

    async def listed() -> set[str]:
        return {e["id"] for e in await _walk(org, "root", "", 200)}

    assert old.id in await listed()
    for _ in range(50):  # the next round of the purge (every 1 s) removes it
        if old.id not in await listed():
            break
        await asyncio.sleep(0.1)
    remaining = await listed()
    assert old.id not in remaining
    assert recent <= remaining
