"""Graceful shutdown of a real ``authsvc serve`` process (docs/reference/operations.md): on SIGTERM
readiness turns DOWN while the port still answers for ``server.shutdown_delay`` seconds, every
request in flight gets its answer, a stalled upload is cut off after ``server.shutdown_timeout``,
the process exits 0, and no refresh token is lost or spent twice."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import signal
import socket
import time
from pathlib import Path

import aiohttp
import pytest

from tests.e2e.processes.test_processes import Database, login, setup_user
from tests.e2e.servers import Server, each_backend, server_env  # noqa: F401 - each_backend overrides the e2e fixture

pytestmark = pytest.mark.slow

CHAINS = 8
"""Clients refreshing at once, each along its own chain of refresh tokens."""


@pytest.fixture
def env(tmp_path: Path, storage_env: dict[str, str]) -> dict[str, str]:
    return server_env(tmp_path, storage_env, AUTHSVC_SERVER__SHUTDOWN_DELAY="1",
                      AUTHSVC_SERVER__SHUTDOWN_TIMEOUT="3")  # fmt: skip


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Chain:
    """One client's refresh chain: ``token`` is the newest refresh token it was handed."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.spent: list[str] = []
        self.answers = 0
        self.resets = 0

    async def run(self, base: str) -> None:
        """Refresh until the server stops accepting connections. A request sent but never
        answered (connection reset) is counted in ``resets``."""
        connector = aiohttp.TCPConnector(force_close=True)  # a fresh connection per request
        async with aiohttp.ClientSession(connector=connector) as session:
            while True:
                try:
                    async with session.post(base + "/refresh",
                                            json={"refresh_token": self.token}) as resp:  # fmt: skip
                        assert resp.status == 200, await resp.text()
                        body = await resp.json()
                except aiohttp.ClientConnectorError:
                    return  # the port is closed: the request was never sent
                except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError):
                    self.resets += 1
                    return
                self.answers += 1
                self.spent.append(self.token)
                self.token = body["refresh_token"]


async def _status(base: str, path: str) -> int:
    async with aiohttp.ClientSession() as session, session.get(base + path) as resp:
        return resp.status


async def test_sigterm_during_a_refresh_burst_loses_nothing(env: dict[str, str]) -> None:
    server = Server(env)
    db = Database(env)
    async with aiohttp.ClientSession() as session:
        user_id = await setup_user(session, server.base)
        chains = [
            Chain((await login(session, server.base))["refresh_token"]) for _ in range(CHAINS)
        ]
    assert await _status(server.base, "/actuator/health/ready") == 200

    burst = [asyncio.create_task(chain.run(server.base)) for chain in chains]
    await asyncio.sleep(0.5)
    server.proc.send_signal(signal.SIGTERM)
    await asyncio.sleep(0.3)
    # Within the delay: readiness says DOWN, yet the port still serves (the chains go on).
    answered = sum(c.answers for c in chains)
    assert await _status(server.base, "/actuator/health/ready") == 503
    assert await _status(server.base, "/actuator/health/live") == 200
    await asyncio.gather(*burst)
    assert server.proc.wait(timeout=15) == 0
    assert "Traceback" not in server.log()
    assert sum(c.answers for c in chains) > answered  # served after SIGTERM too
    # A connection opened in the instant the listener closes may be reset before the server
    # reads its request (how many depends on the machine's load): such a request changed
    # nothing — its chain's token is still the live one, checked below — so the client may
    # retry it elsewhere. Every request the server read was answered.

    # Nothing lost, nothing spent twice: each chain's newest token is its family's only live
    # token, and every token it spent is remembered as rotated.
    live = db.live_hashes(user_id)
    assert live == {_hash(c.token) for c in chains}
    for chain in chains:
        assert all(db.rotated(_hash(t)) for t in chain.spent)
    restarted = Server(env)
    try:
        async with aiohttp.ClientSession() as session:
            for chain in chains:
                async with session.post(restarted.base + "/refresh",
                                        json={"refresh_token": chain.token}) as resp:  # fmt: skip
                    assert resp.status == 200
    finally:
        restarted.stop()


def test_a_stalled_upload_is_cut_off_at_the_shutdown_timeout(env: dict[str, str]) -> None:
    server = Server(env)
    with socket.create_connection(("127.0.0.1", server.port)) as stalled:
        stalled.sendall(b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        b"Content-Length: 100\r\n\r\n" + b'{"email": "a@')  # fmt: skip
        time.sleep(0.2)
        started = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=15) == 0
        elapsed = time.monotonic() - started
    # shutdown_delay 1 s + shutdown_timeout 3 s, and not much more
    assert 3.5 <= elapsed < 8, elapsed
    assert "Traceback" not in server.log()


class KeptAlive:
    """One client on one kept-alive connection, refreshing along its own chain as fast as it
    can, sending each request's headers and body in two writes (as http.client, h11 and many
    load tools do). Records every answer's status and, for a request the server did not
    answer, how long it took to learn so (a refused request fails at once; a held one waits)."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.statuses: list[int] = []
        self.refused_after: list[float] = []

    async def run(self, port: int) -> None:
        """Refresh until the connection is closed and no new one can be opened."""
        while True:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                return  # the port is closed: no request was sent
            try:
                while await self._one(reader, writer):
                    pass
            finally:
                writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """One refresh on the connection; False once the server has closed it."""
        body = json.dumps({"refresh_token": self.token}).encode()
        sent = time.monotonic()
        try:
            writer.write(b"POST /refresh HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                         b"\r\nContent-Length: %d\r\n\r\n" % len(body))  # fmt: skip
            await writer.drain()
            await asyncio.sleep(0.02)
            writer.write(body)
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
        except (OSError, asyncio.IncompleteReadError):
            self.refused_after.append(time.monotonic() - sent)
            return False
        status = int(head.split(b" ", 2)[1])
        length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))  # type: ignore[union-attr]
        answer = json.loads(await reader.readexactly(length))
        self.statuses.append(status)
        if status == 200:
            self.token = answer["refresh_token"]
        return b"connection: close" not in head.lower()


async def _burst_then_sigterm(server: Server, clients: int) -> tuple[list[KeptAlive], float]:
    """Run ``clients`` kept-alive refresh loops, SIGTERM the server 0.5 s in, wait for every
    loop to end; the loops and the seconds from SIGTERM to the server's exit."""
    async with aiohttp.ClientSession() as session:
        await setup_user(session, server.base)
        loops = [KeptAlive((await login(session, server.base))["refresh_token"])
                 for _ in range(clients)]  # fmt: skip
    tasks = [asyncio.create_task(loop.run(server.port)) for loop in loops]
    await asyncio.sleep(0.5)
    server.proc.send_signal(signal.SIGTERM)
    signalled = time.monotonic()
    status = await asyncio.to_thread(server.proc.wait, 15)
    exited = time.monotonic() - signalled
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    assert status == 0
    return loops, exited


@pytest.fixture
def long_timeout_env(tmp_path: Path, storage_env: dict[str, str]) -> dict[str, str]:
    """``shutdown_delay`` 1 s and the default ``shutdown_timeout`` (10 s): a request held until
    the timeout shows as a slow exit."""
    return server_env(tmp_path, storage_env, AUTHSVC_SERVER__SHUTDOWN_DELAY="1")


@pytest.mark.parametrize("workers", ["1", "2"])
async def test_sigterm_under_a_kept_alive_burst_exits_once_in_flight_requests_are_done(
    long_timeout_env: dict[str, str], workers: str
) -> None:
    server = Server({**long_timeout_env, "AUTHSVC_SERVER__WORKERS": workers})
    deadline = time.monotonic() + 30
    while server.log().count("serving on") < int(workers):  # every worker is up
        assert time.monotonic() < deadline, server.log()
        await asyncio.sleep(0.1)
    loops, exited = await _burst_then_sigterm(server, clients=6)
    assert "Traceback" not in server.log()
    statuses = [s for loop in loops for s in loop.statuses]
    # Every request the server read was answered, and answered 200: never a 408 for a request
    # that had arrived whole.
    assert set(statuses) == {200}, sorted(set(statuses))
    # The process ends once the requests in flight are done: the delay plus a small margin,
    # not the shutdown timeout.
    assert exited < 3, exited
    # A request sent once accepting had stopped was refused at once (the connection closed),
    # never held.
    refused = [t for loop in loops for t in loop.refused_after]
    assert all(t < 1 for t in refused), refused
