"""``authsvc serve --workers 2`` (docs/reference/operations.md): two processes on one port; tokens,
throttling, refresh atomicity and /actuator/metrics hold across them, and SIGTERM stops both
with exit status 0 — on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.e2e.servers import Server, each_backend, server_env  # noqa: F401 - each_backend overrides the e2e fixture

pytestmark = pytest.mark.slow

PASSWORD = "correct horse battery"


@pytest.fixture
def server(tmp_path: Path, storage_env: dict[str, str]) -> Any:
    env = server_env(tmp_path, storage_env, AUTHSVC_SERVER__WORKERS="2")
    server = Server(env)
    yield server
    server.stop()


async def _post(base: str, path: str, body: dict[str, Any], token: str | None = None) -> Any:
    """One request on a fresh connection (so the kernel may hand it to either worker)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session,
        session.post(base + path, json=body, headers=headers) as resp,
    ):
        return resp.status, await resp.json() if resp.status != 204 else None


async def _get(base: str, path: str, token: str | None = None) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session,
        session.get(base + path, headers=headers) as resp,
    ):
        return resp.status, await resp.text()


def _sample(metrics: str, name: str, labels: str) -> float:
    match = re.search(rf"^{name}\{{{labels}\}} ([0-9.e+]+)$", metrics, re.M)
    return float(match.group(1)) if match else 0.0


async def test_two_workers_behave_as_one_service(server: Server) -> None:
    base = server.base
    credentials = {"email": "alice@example.com", "password": PASSWORD}
    assert (await _post(base, "/register", credentials))[0] == 201
    logins = 12
    pairs = [(await _post(base, "/login", credentials))[1] for _ in range(logins)]
    # Every worker verifies every token (one key set, created once by the parent).
    for pair in pairs:
        assert (await _get(base, "/me", pair["access_token"]))[0] == 200
    # Refresh stays atomic across processes: of 10 concurrent refreshes exactly one succeeds.
    body = {"refresh_token": pairs[0]["refresh_token"]}
    statuses = sorted(s for s, _ in await asyncio.gather(
        *(_post(base, "/refresh", body) for _ in range(10))))  # fmt: skip
    assert statuses == [200] + [401] * 9
    # Throttling counts failures from every worker: the sixth try is 429 even with the password.
    wrong = {"email": "alice@example.com", "password": "wrong password!"}
    assert [(await _post(base, "/login", wrong))[0] for _ in range(5)] == [401] * 5
    assert (await _post(base, "/login", credentials))[0] == 429
    # Metrics aggregate both workers: every login is counted once, whichever served it.
    status, metrics = await _get(base, "/actuator/metrics")
    assert status == 200
    assert _sample(metrics, "authsvc_logins_total", 'outcome="success"') == logins
    assert _sample(metrics, "authsvc_logins_total", 'outcome="rate_limited"') == 1


def test_sigterm_stops_every_worker_with_status_0(server: Server) -> None:
    server.proc.terminate()
    status = server.proc.wait(timeout=30)
    log = server.log()
    assert status == 0, log[-3000:]
    assert log.count("authsvc stopped") == 2 and "all workers stopped" in log
    assert "Traceback" not in log
