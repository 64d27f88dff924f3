"""The refresh reuse interval across two server processes on one database
(docs/reference/tokens-and-sessions.md): the reuse count is a compare-and-set in the database, so
concurrent presentations of one rotated token to two processes cannot pass
``auth.refresh_reuse_max`` together."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from tests.e2e.helpers import PASSWORD
from tests.e2e.servers import Server, each_backend, server_env  # noqa: F401 - overrides backend


@pytest.fixture
def two_servers(tmp_path: Path, storage_env: dict[str, str]) -> Iterator[list[Server]]:
    """Two ``authsvc serve`` processes sharing the e2e database and keys, reuse interval 10 s,
    at most 2 reuses per token."""
    env = server_env(tmp_path, storage_env, AUTHSVC_AUTH__REFRESH_REUSE_INTERVAL="10",
                     AUTHSVC_AUTH__REFRESH_REUSE_MAX="2")  # fmt: skip
    servers = [Server(env)]
    servers.append(Server(env))
    try:
        yield servers
    finally:
        for server in servers:
            server.stop()


async def test_two_processes_share_the_reuse_cap(two_servers: list[Server]) -> None:
    a, b = two_servers
    credentials = {"email": "a@example.com", "password": PASSWORD}
    async with aiohttp.ClientSession() as http:
        resp = await http.post(a.base + "/register", json=credentials)
        assert resp.status == 201, await resp.text()
        pair = await (await http.post(a.base + "/login", json=credentials)).json()
        token = pair["refresh_token"]
        first = await http.post(b.base + "/refresh", json={"refresh_token": token})
        assert first.status == 200

        async def present(server: Server) -> int:
            resp = await http.post(server.base + "/refresh", json={"refresh_token": token})
            return resp.status

        statuses = await asyncio.gather(*(present(s) for s in (a, b, a, b)))
    # Two more rotations inside the interval; the third presentation is reuse (and the fourth
    # finds the family revoked).
    assert sorted(statuses) == [200, 200, 401, 401]
