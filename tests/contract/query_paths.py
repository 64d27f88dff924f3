"""The hot and admin paths of issue 35, driven over HTTP against a ``bench.seed`` database, for
the query-plan tests of each backend (``test_query_plans``, ``test_sqlite_query_plans``): they
record the statements the app sends on each path and check each one's plan."""

from __future__ import annotations

from typing import Any, Protocol

import aiohttp

from application.shared.pagination import encode_cursor
from bench.seed import PASSWORD, Plan, client_id

SEEDED_USERS = 3_000
"""``bench.seed`` size: 10 token rows and 10 audit rows per user (as ``bench.scale``), enough
rows that the planner chooses by cost."""
GROWING = (
    "users", "sessions", "refresh_tokens", "rotated_refresh_tokens", "audit_events", "passkeys",
    "group_members", "oauth_clients", "revoked_access_tokens", "login_failures",
    "mfa_recovery_codes",
)  # fmt: skip
"""The tables that grow with users, sessions, refreshes or events: none may be read whole."""
DEEP_USER = "SELECT id FROM users ORDER BY id LIMIT 1 OFFSET 2700"
"""The id a deep page of ``GET /users`` (90 % of the id order) starts after."""
AUDITED_USER = "SELECT id FROM users WHERE email = 'user5@seed.example.com'"
PATHS = frozenset({"POST /login", "POST /refresh", "GET /me", "client credentials",
                   "introspection", "GET /users", "GET /users deep", "GET /me/sessions"})  # fmt: skip
"""Paths whose statements every run records (besides the audit listings')."""


def seed_plan() -> Plan:
    """What to seed: ``SEEDED_USERS`` users over 10 organizations, 2,000 OAuth clients (enough
    that a lookup by id beats reading the table)."""
    return Plan(SEEDED_USERS, SEEDED_USERS * 10, SEEDED_USERS * 10, orgs=10, clients=2_000,
                bcrypt_rounds=4)  # fmt: skip


class Recorder(Protocol):
    """Keeps the statements sent while ``path`` is set (empty: none)."""

    path: str


async def drive_paths(client: Any, recorder: Recorder, deep: str, audited: str) -> None:
    """Send one request of each path with ``recorder.path`` naming it; assert each answers 2xx.
    ``deep``: the user id a deep page starts after; ``audited``: a user id to filter events by.
    ``user2`` must have at least 100 live sessions."""

    async def login(email: str) -> dict[str, Any]:
        resp = await client.post("/login", json={"email": email, "password": PASSWORD})
        assert resp.status == 200, await resp.text()
        return await resp.json()  # type: ignore[no-any-return]

    def bearer(pair: dict[str, Any]) -> dict[str, str]:
        return {"Authorization": f"Bearer {pair['access_token']}"}

    admin = bearer(await login("user0@seed.example.com"))
    org_admin = bearer(await login("user1@seed.example.com"))
    many = bearer(await login("user2@seed.example.com"))
    basic = {"Authorization": aiohttp.encode_basic_auth(client_id(0), "seed-secret-0")}
    form = {"grant_type": "client_credentials"}

    async def step(path: str, request: Any) -> Any:
        recorder.path = path
        resp = await request
        recorder.path = ""
        assert resp.status == 200, (path, await resp.text())
        return await resp.json()

    pair = await step("POST /login", client.post(
        "/login", json={"email": "user5@seed.example.com", "password": PASSWORD}))  # fmt: skip
    pair = await step("POST /refresh", client.post(
        "/refresh", json={"refresh_token": pair["refresh_token"]}))  # fmt: skip
    await step("GET /me", client.get("/me", headers=bearer(pair)))
    granted = await step("client credentials", client.post("/oauth/token", data=form,
                                                           headers=basic))  # fmt: skip
    body = await step("introspection", client.post(
        "/oauth/introspect", data={"token": granted["access_token"]}, headers=basic))  # fmt: skip
    assert body["active"] is True
    await step("GET /users", client.get("/users?limit=50", headers=admin))
    cursor = encode_cursor("users", deep)
    await step("GET /users deep", client.get(f"/users?limit=50&cursor={cursor}", headers=admin))
    for query in ("", "&type=user.registered", f"&user_id={audited}", "&org_id=org-00003",
                  "&since=2026-01-01T00:00:00Z"):  # fmt: skip
        await step(f"GET /audit-events{query}", client.get(
            f"/audit-events?limit=50{query}", headers=admin))  # fmt: skip
    await step("GET /audit-events (org_admin, type)", client.get(
        "/audit-events?limit=50&type=user.registered", headers=org_admin))  # fmt: skip
    sessions = await step("GET /me/sessions", client.get("/me/sessions", headers=many))
    assert len(sessions["items"]) >= 100
