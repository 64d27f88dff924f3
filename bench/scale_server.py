"""A running ``authsvc serve`` over one ``bench.scale_db.Target``, and the timing of a batch of
requests against it: latency percentiles, the server's CPU and PostgreSQL's CPU per request."""

from __future__ import annotations

import base64
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from bench.http_load import cpu_seconds, free_port, wait_ready
from bench.scale_db import PgCpu, Target

PASSWORD = "correct horse battery"


class Server:
    """``authsvc serve`` (one worker) on ``target``'s database; the purge timer off (the
    benchmark starts the purge itself), the login throttle and the anonymous-write limit off
    (one client address stands for many users)."""

    def __init__(self, target: Target) -> None:
        self.target = target
        tmp = tempfile.mkdtemp(prefix="authsvc-scale-")
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.app_name = f"authsvc-scale-{uuid.uuid4().hex[:8]}"
        self.env = {
            **os.environ,
            "AUTHSVC_AUTH__KEY_DIR": os.path.join(tmp, "keys"),
            "AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "1000000",
            "AUTHSVC_SERVER__ANONYMOUS_WRITE_RATE": "0",
            "AUTHSVC_STORAGE__BACKEND": target.backend,
            "AUTHSVC_STORAGE__PURGE_INTERVAL": "0",
            "AUTHSVC_SERVER__PORT": str(self.port),
            "AUTHSVC_SERVER__WORKERS": "1",
            "AUTHSVC_AUTH__ISSUER": "http://localhost",
        }
        self.pg: PgCpu | None = None
        if target.backend == "postgres":
            sep = "&" if "?" in target.dsn else "?"
            dsn = f"{target.dsn}{sep}application_name={self.app_name}"
            self.env["AUTHSVC_STORAGE__POSTGRES_DSN"] = dsn
            self.env["AUTHSVC_STORAGE__POSTGRES_SCHEMA"] = target.schema
            self.env["AUTHSVC_AUTH__KEY_ENCRYPTION_KEY"] = _kek(target)
            self.pg = PgCpu(target.dsn, self.app_name)
        else:
            self.env["AUTHSVC_STORAGE__SQLITE_PATH"] = target.path
        self.proc: subprocess.Popen[bytes] | None = None

    async def start(self) -> None:
        """Start the server and wait until it answers."""
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "entrypoints.cli", "serve"],
            env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        await wait_ready(self.base, self.proc)

    def stop(self) -> None:
        """Stop the server (SIGTERM, then wait)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)

    def cli(self, *args: str) -> subprocess.Popen[str]:
        """``authsvc <args>`` on the same storage (started; stdout piped)."""
        command = [sys.executable, "-m", "entrypoints.cli", *args]
        return subprocess.Popen(command, env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)  # fmt: skip


def _kek(target: Target) -> str:
    """The key-encryption key of ``target``'s schema (its signing keys live in the database,
    sealed with it): made on first use, kept in the work directory for the next run."""
    path = os.path.join(target.workdir, f"{target.schema}.kek")
    if not os.path.exists(path):
        kek = base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(kek)
    with open(path, encoding="ascii") as fh:
        return fh.read().strip()


@dataclasses.dataclass
class Figures:
    """One path at one size: latency (ms), CPU per request (µs; PostgreSQL's None on SQLite,
    where the database works inside the server process)."""

    path: str
    requests: int
    p50_ms: float
    p99_ms: float
    app_cpu_us: float
    db_cpu_us: float | None
    errors: int


def percentile(ordered: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of sorted ``ordered`` (nearest rank; 0 when empty)."""
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


Request = Callable[[aiohttp.ClientSession, int], Awaitable[int]]
"""Makes request number ``i`` and returns its HTTP status."""


async def measure(
    server: Server,
    session: aiohttp.ClientSession,
    path: str,
    request: Request,
    count: int,
    concurrency: int,
    warmup: int = 10,
) -> Figures:
    """Send ``warmup`` unmeasured requests, then ``count`` requests, ``concurrency`` at a time;
    a request counts as an error unless 2xx (its latency is then left out)."""
    import asyncio

    for i in range(warmup):
        await request(session, i)
    latencies: list[float] = []
    errors = 0
    counter = iter(range(warmup, warmup + count))
    assert server.proc is not None
    app0 = cpu_seconds(server.proc.pid)
    db0 = server.pg.snapshot() if server.pg else None

    async def worker() -> None:
        nonlocal errors
        for i in counter:
            t0 = time.perf_counter()
            status = await request(session, i)
            if 200 <= status < 300:
                latencies.append(time.perf_counter() - t0)
            else:
                errors += 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    app = cpu_seconds(server.proc.pid) - app0
    db = None if server.pg is None or db0 is None else PgCpu.spent(db0, server.pg.snapshot())
    ordered = sorted(latencies)
    done = max(count, 1)
    return Figures(path, count, percentile(ordered, 0.5) * 1e3, percentile(ordered, 0.99) * 1e3,
                   app / done * 1e6, None if db is None else db / done * 1e6, errors)  # fmt: skip


async def status_of(request: Any) -> int:
    """Await an aiohttp request context, read the body, return the status."""
    async with request as r:
        await r.read()
        return int(r.status)


async def login(session: aiohttp.ClientSession, base: str, email: str) -> dict[str, Any]:
    """``POST /login`` with the seeded password; the token pair."""
    async with session.post(base + "/login", json={"email": email, "password": PASSWORD}) as r:
        if r.status != 200:
            raise SystemExit(f"login of {email} failed: {r.status} {await r.text()}")
        return await r.json()  # type: ignore[no-any-return]
