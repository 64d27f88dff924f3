"""Writes from anyone are limited per client address (docs/reference/operations.md, ADR 0028): a
client flooding an unauthenticated route that writes gets 429 ``rate_limited`` with ``Retry-After``
past ``server.anonymous_write_burst`` requests (refilled at ``server.anonymous_write_rate`` per
second) and fills no table; successes that prove a credential are not counted; addresses behind a
trusted proxy have their own buckets; a refresh changes the limit at once."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.anonymous_writes import ANONYMOUS_WRITES
from entrypoints.http.app import create_app
from tests.e2e.helpers import ONE_PER_BACKEND, PASSWORD, MakeClient, assert_problem, bearer
from tests.e2e.http.test_actuator_http import refresh, superadmin_token, write_config
from tests.e2e.processes.test_processes import Database


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


def _limit(rate: float, burst: int, **more: str) -> dict[str, str]:
    return {"AUTHSVC_SERVER__ANONYMOUS_WRITE_RATE": str(rate),
            "AUTHSVC_SERVER__ANONYMOUS_WRITE_BURST": str(burst), **more}  # fmt: skip


def _count(env: dict[str, str], sql: str) -> int:
    return int(Database(env).rows(sql)[0][0])


async def _flood(client: TestClient, path: str, bodies: list[dict[str, object]],
                 headers: dict[str, str] | None = None) -> tuple[Counter[int], float]:  # fmt: skip
    """POST every body to ``path`` in a tight loop; the statuses and the seconds it took."""
    statuses: Counter[int] = Counter()
    started = time.monotonic()
    for body in bodies:
        resp = await client.post(path, json=body, headers=headers)
        statuses[resp.status] += 1
        if resp.status == 429:
            await assert_problem(resp, 429, "rate_limited")
            assert int(resp.headers["Retry-After"]) >= 1
        else:
            await resp.read()
    return statuses, time.monotonic() - started


async def test_a_flood_of_passkey_ceremonies_fills_no_table(
    make_client: MakeClient, base_env: dict[str, str]
) -> None:
    client = await make_client(_limit(10, 50))
    statuses, elapsed = await _flood(client, "/login/passkey/options", [{}] * 200)
    assert set(statuses) == {200, 429}
    assert 50 <= statuses[200] <= 50 + 10 * elapsed + 1
    ceremonies = _count(base_env, "SELECT count(*) FROM webauthn_ceremonies")
    assert ceremonies == statuses[200]


async def test_a_flood_of_failed_logins_writes_a_bounded_number_of_audit_rows(
    make_client: MakeClient, base_env: dict[str, str]
) -> None:
    client = await make_client(_limit(10, 50))
    bodies: list[dict[str, object]] = [
        {"email": f"nobody{i}@example.com", "password": "wrong password!"} for i in range(200)
    ]
    statuses, elapsed = await _flood(client, "/login", bodies)
    assert set(statuses) == {401, 429}
    assert statuses[401] <= 50 + 10 * elapsed + 1
    failed = _count(base_env, "SELECT count(*) FROM audit_events WHERE type = 'login.failed'")
    assert failed == statuses[401]


async def test_registrations_and_reset_requests_are_limited_in_one_bucket(
    make_client: MakeClient, base_env: dict[str, str]
) -> None:
    client = await make_client(_limit(0.01, 5))
    for i in range(3):
        resp = await client.post(
            "/register", json={"email": f"u{i}@example.com", "password": PASSWORD}
        )
        assert resp.status == 201
    for _ in range(2):
        assert (
            await client.post("/password/forgot", json={"email": "u0@example.com"})
        ).status < 300
    await assert_problem(
        await client.post("/register", json={"email": "late@example.com", "password": PASSWORD}),
        429, "rate_limited")  # fmt: skip
    await assert_problem(await client.post("/password/forgot", json={"email": "u0@example.com"}),
                         429, "rate_limited")  # fmt: skip
    assert _count(base_env, "SELECT count(*) FROM users") == 3


async def test_successful_logins_give_their_token_back(make_client: MakeClient) -> None:
    client = await make_client(_limit(0.01, 3))
    credentials = {"email": "alice@example.com", "password": PASSWORD}
    assert (await client.post("/register", json=credentials)).status == 201  # one token
    for _ in range(10):  # a password proven: not counted
        assert (await client.post("/login", json=credentials)).status == 200
    wrong = {**credentials, "password": "wrong password!"}
    assert [(await client.post("/login", json=wrong)).status for _ in range(3)] == [401, 401, 429]
    # The bucket is empty: even the right password waits (the answer says nothing of it).
    await assert_problem(await client.post("/login", json=credentials), 429, "rate_limited")
    # Routes anyone may call that write nothing are not limited.
    assert (await client.get("/.well-known/jwks.json")).status == 200
    assert (await client.post("/refresh", json={"refresh_token": "x"})).status == 401


async def test_each_address_behind_a_trusted_proxy_has_its_own_bucket(
    make_client: MakeClient,
) -> None:
    client = await make_client(_limit(0.01, 2, AUTHSVC_SERVER__TRUSTED_PROXIES="127.0.0.1"))

    async def options(address: str) -> int:
        resp = await client.post("/login/passkey/options", json={},
                                 headers={"X-Forwarded-For": address})  # fmt: skip
        return resp.status

    assert [await options("198.51.100.1") for _ in range(3)] == [200, 200, 429]
    assert [await options("198.51.100.2") for _ in range(3)] == [200, 200, 429]
    # One IPv6 host holds a whole /64: it is one bucket.
    assert [await options(f"2001:db8:0:1::{i}") for i in range(1, 4)] == [200, 200, 429]


async def test_the_oauth_endpoints_answer_429_in_rfc_6749_json(make_client: MakeClient) -> None:
    client = await make_client(_limit(0.01, 2))
    form = {"grant_type": "client_credentials", "client_id": "nobody", "client_secret": "x"}
    statuses = [(await client.post("/oauth/token", data=form)).status for _ in range(2)]
    assert statuses == [401, 401]
    resp = await client.post("/oauth/introspect", data={"token": "x"})
    assert resp.status == 429
    assert resp.headers["Content-Type"].startswith("application/json")
    assert resp.headers["Cache-Control"] == "no-store" and int(resp.headers["Retry-After"]) >= 1
    assert (await resp.json())["error"] == "rate_limited"


async def test_a_refresh_changes_the_limit_at_once(
    aiohttp_client: Callable[..., Awaitable[TestClient]], base_env: dict[str, str], tmp_path: Path
) -> None:
    path = write_config(tmp_path / "authsvc.toml",
                        "[server]\nanonymous_write_rate = 0.01\nanonymous_write_burst = 2\n")  # fmt: skip
    environ = {k: v for k, v in base_env.items() if "ANONYMOUS_WRITE" not in k}
    environ.pop("AUTHSVC_AUTH__ALGORITHM")
    container = build_container(
        load_config(path, environ=environ), config_path=path, environ=environ
    )
    client = await aiohttp_client(create_app(container))
    root = await superadmin_token(client)  # a successful login: not counted
    assert [(await client.post("/login/passkey/options", json={})).status for _ in range(3)] == [
        200, 200, 429]  # fmt: skip
    write_config(tmp_path / "authsvc.toml",
                 "[server]\nanonymous_write_rate = 1000\nanonymous_write_burst = 100\n")  # fmt: skip
    resp = await refresh(client, root)
    assert resp.status == 200, await resp.text()
    assert await resp.json() == {"changed": ["server"], "restart_required": []}
    await asyncio.sleep(0.2)  # at the new rate the bucket is full (100) again within 0.1 s
    statuses = [(await client.post("/login/passkey/options", json={})).status for _ in range(60)]
    assert statuses == [200] * 60
    # A bad value is refused, naming the key; the limit in force stays.
    write_config(tmp_path / "authsvc.toml", "[server]\nanonymous_write_rate = -1\n")
    resp = await refresh(client, root)
    body = await assert_problem(resp, 422, "invalid_configuration")
    assert "server.anonymous_write_rate" in str(body)
    assert (
        await client.post("/login/passkey/options", json={}, headers=bearer(root))
    ).status == 200


async def test_openapi_declares_the_429_of_every_limited_route(client: TestClient) -> None:
    doc = await (await client.get("/openapi.json")).json()
    pages = {(p["method"], p["path"]) for p in doc["x-authsvc-pages"]}
    for (method, path), route in ANONYMOUS_WRITES.items():
        if route.page:  # a hosted page's form: listed as a page, its 429 is the error page
            assert (method, path) in pages
            continue
        responses = doc["paths"][path][method.lower()]["responses"]
        assert "429" in responses, (method, path)
        assert ("content" in responses["429"]) is not route.oauth
