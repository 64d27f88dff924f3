"""Slow and idle clients against a real ``authsvc serve`` process (issue 21;
docs/reference/operations.md): headers that stall get 408 after ``server.header_timeout``, bodies
that stall get 408 after ``server.body_timeout`` (each problem+json, then the connection closes),
idle connections close after ``server.keepalive_timeout``, and a crowd of slow and idle connections
leaves liveness and login answering."""

from __future__ import annotations

import asyncio
import json
import resource
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from tests.e2e.servers import Server

pytestmark = pytest.mark.slow

PASSWORD = "correct horse battery"
SLOW_HEADERS = b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
SLOW_BODY_HEADERS = SLOW_HEADERS + b"Content-Length: 100\r\n\r\n"


@pytest.fixture
def backend() -> str:
    return "sqlite"


def _env(tmp_path: Path, storage_env: dict[str, str], **timeouts: float) -> dict[str, str]:
    env = {"AUTHSVC_AUTH__KEY_DIR": str(tmp_path / "keys"), "AUTHSVC_AUTH__BCRYPT_ROUNDS": "4",
           **storage_env}  # fmt: skip
    env.update({f"AUTHSVC_SERVER__{k.upper()}": str(v) for k, v in timeouts.items()})
    return env


@pytest.fixture
def server(tmp_path: Path, storage_env: dict[str, str]) -> Iterator[Server]:
    """A server with header, body and keep-alive timeouts of 1, 2 and 3 s."""
    started = Server(
        _env(tmp_path, storage_env, header_timeout=1, body_timeout=2, keepalive_timeout=3)
    )
    yield started
    started.stop()
    assert "Traceback" not in started.log()


async def _answer(reader: asyncio.StreamReader, limit: float) -> tuple[bytes, float, float]:
    """Everything the server sends until it closes: (bytes, seconds to the first byte, seconds
    to the close)."""
    started = time.monotonic()
    data = b""
    first = 0.0
    async with asyncio.timeout(limit):
        while chunk := await reader.read(65536):
            if not data:
                first = time.monotonic() - started
            data += chunk
    return data, first or time.monotonic() - started, time.monotonic() - started


def _problem(data: bytes) -> tuple[int, dict[str, object], bytes]:
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    headers = head.lower()
    assert b"content-type: application/problem+json" in headers, head
    return status, json.loads(body), headers


async def test_headers_that_stall_get_408_and_the_connection_closes(server: Server) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(SLOW_HEADERS)  # no blank line: the headers never end
    data, first, closed = await _answer(reader, 5)
    writer.close()
    status, body, headers = _problem(data)
    assert status == 408 and body["code"] == "request_timeout" and body["status"] == 408
    assert b"connection: close" in headers
    assert 0.9 <= first < 2.0 and closed < 2.0, (first, closed)


async def test_a_body_that_stalls_gets_408_and_the_connection_closes(server: Server) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(SLOW_BODY_HEADERS + b'{"email": ')  # 10 of 100 bytes, then nothing
    data, first, closed = await _answer(reader, 6)
    writer.close()
    status, body, _ = _problem(data)
    assert status == 408 and body["code"] == "request_timeout"
    assert 1.9 <= first < 3.0 and closed < 3.0, (first, closed)


async def _trickle(port: int, every: float, limit: float) -> tuple[bytes, float, float]:
    """A client that sends its headers, then one body byte every ``every`` seconds (the body
    never completes); what ``_answer`` returns, timed from the headers."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(SLOW_BODY_HEADERS + b"{")

    async def trickle() -> None:
        while True:
            await asyncio.sleep(every)
            writer.write(b" ")

    sender = asyncio.create_task(trickle())
    try:
        return await _answer(reader, limit)
    finally:
        sender.cancel()
        writer.close()


async def test_a_trickling_body_is_cut_off_at_the_body_timeout(server: Server) -> None:
    data, first, closed = await _trickle(server.port, 0.25, 6)  # never done within 2 s
    assert _problem(data)[0] == 408
    assert 1.9 <= first < 3.0 and closed < 3.0, (first, closed)


async def test_idle_connections_close_after_the_keepalive_timeout(server: Server) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    data, _, closed = await _answer(reader, 6)  # nothing sent at all
    writer.close()
    assert data == b"" and 2.9 <= closed < 4.5, closed

    # A keep-alive connection that has been answered closes once idle that long, too.
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(b"GET /actuator/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
    data, _, closed = await _answer(reader, 6)
    writer.close()
    assert data.startswith(b"HTTP/1.1 200") and 2.9 <= closed < 4.5, closed


async def test_slow_clients_within_the_limits_are_served(server: Server) -> None:
    body = json.dumps({"email": "nobody@example.com", "password": "wrong password"}).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    for piece in (b"POST /login HTTP/1.1\r\n", b"Host: x\r\nContent-Type: application/json\r\n",
                  f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()):  # fmt: skip
        writer.write(piece)
        await asyncio.sleep(0.3)  # 0.6 s for the headers (limit 1 s)
    for i in range(0, len(body), 20):
        writer.write(body[i : i + 20])
        await asyncio.sleep(0.3)  # ~1.2 s for the body (limit 2 s)
    data, _, _ = await _answer(reader, 5)
    writer.close()
    status, problem, _ = _problem(data)
    assert status == 401 and problem["code"] == "invalid_credentials"


def _room_for(connections: int) -> int:
    """As many of ``connections`` as the open-file limit allows (the soft limit is raised to
    the hard one first; client and server each hold one descriptor per connection)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    return max(50, min(connections, soft - 200))


async def test_a_crowd_of_slow_and_idle_clients_leaves_liveness_and_login_answering(
    tmp_path: Path, storage_env: dict[str, str]
) -> None:
    idle_n = _room_for(1000 + 200) - 200
    slow_n = 200
    server = Server(
        _env(tmp_path, storage_env, header_timeout=2, body_timeout=4, keepalive_timeout=30)
    )
    try:
        async with aiohttp.ClientSession() as session:
            async with session.post(server.base + "/register",
                                    json={"email": "alice@example.com", "password": PASSWORD}) as r:  # fmt: skip
                assert r.status == 201
            idle = []
            for _ in range(idle_n):
                idle.append(await asyncio.open_connection("127.0.0.1", server.port))

            # One body byte a second: 100 bytes would take 100 s.
            slow = [asyncio.create_task(_trickle(server.port, 1, 30)) for _ in range(slow_n)]
            await asyncio.sleep(0.5)  # every slow client has sent its headers

            latencies = []
            deadline = time.monotonic() + 2.5  # inside the 4 s body timeout
            while time.monotonic() < deadline:
                started = time.monotonic()
                async with session.get(server.base + "/actuator/health/live") as r:
                    assert r.status == 200
                latencies.append(time.monotonic() - started)
                await asyncio.sleep(0.01)
            started = time.monotonic()
            async with session.post(server.base + "/login",
                                    json={"email": "alice@example.com", "password": PASSWORD}) as r:  # fmt: skip
                assert r.status == 200
            login = time.monotonic() - started

            results = await asyncio.gather(*slow)
            for _, writer in idle:
                writer.close()
        p50 = statistics.median(latencies)
        p99 = statistics.quantiles(latencies, n=100)[98]
        worst = max(closed for _, _, closed in results)
        print(
            f"\n{idle_n} idle + {slow_n} slow-body connections: liveness p50 {p50 * 1000:.1f} ms,"
            f" p99 {p99 * 1000:.1f} ms over {len(latencies)} requests; login {login * 1000:.0f} ms;"
            f" slow clients answered and closed within {worst:.2f} s (body_timeout 4 s)"
        )
        assert p99 < 0.2, p99
        for data, _, closed in results:
            assert data.startswith(b"HTTP/1.1 408") or data == b"", data[:100]
            assert closed < 4 + 1, closed
        assert sum(data.startswith(b"HTTP/1.1 408") for data, _, _ in results) >= slow_n * 0.95
    finally:
        server.stop()
    assert "Traceback" not in server.log()
