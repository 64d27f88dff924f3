"""HTTP figures per scenario (liveness, /me, /refresh, client credentials, introspection,
login, passkey login): requests per second, p50/p99 latency and the server's CPU time per
request (µs, from the kernel's counters for the server process and its workers: steadier than
req/s on a shared machine).

Starts ``authsvc serve`` in a subprocess (temporary key dir and database unless told otherwise),
then drives it from this process with aiohttp over loopback. Prints a table; not a test.

    .venv/bin/python -m bench.http_load [--algorithm ML-DSA-65] [--backend postgres --dsn DSN]
                                        [--seconds 5] [--concurrency 32] [--bcrypt-rounds 12]
                                        [--workers 2]

Client and server share the machine's cores, so figures are lower bounds, useful to compare.
"passkey login" counts whole logins (options, then the assertion: two requests each), made by
the tests' software authenticator (ES256), discoverable (no email), beside "login" (bcrypt).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import dataclasses
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from typing import Any

import aiohttp

PASSWORD = "correct horse battery"
LIVE = "/actuator/health/live"
ORIGIN = "https://bench.localhost"  # webauthn.origins; the RP ID is auth.issuer's host: localhost


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (bound and released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def wait_ready(base: str, proc: subprocess.Popen[bytes]) -> None:
    """Wait until ``base`` answers its liveness probe; raises when ``proc`` exits first."""
    async with aiohttp.ClientSession() as session:
        for _ in range(300):
            if proc.poll() is not None:
                raise SystemExit(f"server exited with status {proc.returncode}")
            try:
                async with session.get(base + "/.well-known/jwks.json") as resp:
                    if resp.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise SystemExit("server did not become ready")


async def _login(session: aiohttp.ClientSession, base: str, email: str) -> dict[str, Any]:
    async with session.post(base + "/login", json={"email": email, "password": PASSWORD}) as r:
        assert r.status == 200, await r.text()
        return await r.json()  # type: ignore[no-any-return]


async def _passkey(
    session: aiohttp.ClientSession, base: str, auth: dict[str, str]
) -> tuple[Any, bytes]:
    """Register a software passkey (ES256) for the bearer of ``auth``; returns it and the
    user handle an authenticator keeps beside it (for discoverable assertions)."""
    from tests.webauthn_authenticator import SoftAuthenticator, b64url_decode

    device = SoftAuthenticator("ES256")
    url = base + "/me/passkeys/registration/options"
    async with session.post(url, json={"password": PASSWORD}, headers=auth) as r:
        assert r.status == 200, await r.text()
        begun = await r.json()
    answer = device.register(begun["options"], ORIGIN)
    body = {"ceremony_id": begun["ceremony_id"], "credential": answer}
    async with session.post(base + "/me/passkeys", json=body, headers=auth) as r:
        assert r.status == 201, await r.text()
    return device, b64url_decode(begun["options"]["user"]["id"])


def _family(pid: int) -> list[int]:
    """Process ``pid`` and its worker processes (its children; Linux ``/proc``)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                parent = int(fh.read().rpartition(")")[2].split()[1])
        except OSError:
            continue
        if int(entry) == pid or parent == pid:
            found.append(int(entry))
    return found


def start_server(
    args: argparse.Namespace, extra: dict[str, str]
) -> tuple[subprocess.Popen[bytes], int, str, dict[str, str]]:
    """Start ``authsvc serve`` for a benchmark: ``args.algorithm``, ``args.bcrypt_rounds``,
    ``args.backend`` (SQLite in a temporary folder, or a fresh schema of ``args.dsn`` with the
    keys in the database), ``args.workers``, the login throttle and the limit on writes from
    anyone off (one client address stands for many users), plus ``extra`` settings. Returns the
    process, its port, the PostgreSQL schema name (for ``stop_server``) and its environment
    (for command-line calls on the same storage)."""
    tmp = tempfile.mkdtemp(prefix="authsvc-bench-")
    port = free_port()
    env = {
        **os.environ,
        "AUTHSVC_AUTH__ALGORITHM": args.algorithm,
        "AUTHSVC_AUTH__KEY_DIR": os.path.join(tmp, "keys"),
        "AUTHSVC_AUTH__BCRYPT_ROUNDS": str(args.bcrypt_rounds),
        "AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "1000000",
        "AUTHSVC_SERVER__ANONYMOUS_WRITE_RATE": "0",
        "AUTHSVC_STORAGE__BACKEND": args.backend,
        "AUTHSVC_STORAGE__SQLITE_PATH": os.path.join(tmp, "authsvc.db"),
        "AUTHSVC_SERVER__PORT": str(port),
        "AUTHSVC_SERVER__WORKERS": str(args.workers),
        **extra,
    }
    schema = f"bench_{uuid.uuid4().hex[:12]}"  # a fresh one, dropped after the run
    if args.backend == "postgres":
        env["AUTHSVC_STORAGE__POSTGRES_DSN"] = args.dsn
        env["AUTHSVC_STORAGE__POSTGRES_SCHEMA"] = schema
        kek = base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()
        env["AUTHSVC_AUTH__KEY_ENCRYPTION_KEY"] = kek  # keys live in the database there
    proc = subprocess.Popen(
        [sys.executable, "-m", "entrypoints.cli", "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return proc, port, schema, env


def stop_server(proc: subprocess.Popen[bytes], backend: str, dsn: str | None, schema: str) -> None:
    """Stop the server under test (SIGTERM, 15 s) and, on PostgreSQL, drop its schema."""
    proc.terminate()
    proc.wait(timeout=15)
    if backend == "postgres" and dsn is not None:
        import psycopg

        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` and of its worker processes (``/proc``:
    ``utime``/``stime`` in clock ticks)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for member in _family(pid):
        try:
            with open(f"/proc/{member}/stat") as fh:
                fields = fh.read().rpartition(")")[2].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _rss_mib(pid: int) -> list[float]:
    """Resident set size (MiB, ``VmRSS``) of process ``pid`` and of each of its workers."""
    sizes = []
    for member in _family(pid):
        try:
            with open(f"/proc/{member}/status") as fh:
                kib = next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            continue
        sizes.append(kib / 1024)
    return sizes


@dataclasses.dataclass
class Figures:
    """One scenario: requests per second, latency percentiles (ms), server CPU per request."""

    name: str
    rps: float
    p50_ms: float
    p99_ms: float
    cpu_us: float
    errors: int

    def row(self) -> str:
        """A markdown table row."""
        return (
            f"| {self.name} | {self.rps:,.0f} | {self.p50_ms:.1f} | {self.p99_ms:.1f} "
            f"| {self.cpu_us:,.0f} | {self.errors} |"
        )


async def _measure(name: str, pid: int, worker: Any, concurrency: int, seconds: float) -> Figures:
    """Run ``worker(deadline, latencies)`` ``concurrency`` times at once for ``seconds``; it
    appends one latency (s) per successful request and returns its error count."""
    latencies: list[float] = []
    cpu0 = cpu_seconds(pid)
    start = time.perf_counter()
    deadline = start + seconds
    errors = sum(await asyncio.gather(*(worker(deadline, latencies) for _ in range(concurrency))))
    elapsed = time.perf_counter() - start
    cpu = cpu_seconds(pid) - cpu0
    done = len(latencies) or 1
    ordered = sorted(latencies) or [0.0]
    return Figures(
        name,
        len(latencies) / elapsed,
        ordered[len(ordered) // 2] * 1e3,
        ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e3,
        cpu / done * 1e6,
        errors,
    )


async def _timed(latencies: list[float], request: Any) -> Any:
    """Await ``request`` (an aiohttp request context); append its latency if it answered 2xx;
    return the response body (JSON when it is JSON) and status."""
    t0 = time.perf_counter()
    async with request as r:
        body = await r.json() if r.content_type == "application/json" else await r.read()
        if 200 <= r.status < 300:
            latencies.append(time.perf_counter() - t0)
        return r.status, body


def client_credentials(env: dict[str, str]) -> dict[str, str]:
    """Register an OAuth client with ``authsvc clients create`` (same storage as the server)."""
    out = subprocess.run(
        [sys.executable, "-m", "entrypoints.cli", "clients", "create", "bench", "--scope", "read"],
        env=env, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    values = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    basic = aiohttp.encode_basic_auth(values["client_id"], values["client_secret"])
    return {"Authorization": basic}


async def run(args: argparse.Namespace) -> list[Figures]:
    """Start a server with ``args`` and measure each scenario; returns the figures."""
    proc, port, schema, env = start_server(
        args, {"AUTHSVC_AUTH__ISSUER": "http://localhost", "AUTHSVC_WEBAUTHN__ORIGINS": ORIGIN}
    )
    base = f"http://127.0.0.1:{port}"
    n, secs = args.concurrency, args.seconds
    try:
        await wait_ready(base, proc)
        await asyncio.sleep(1.0 if args.workers > 1 else 0.0)  # every worker up
        connector = aiohttp.TCPConnector(limit=max(n, 64))
        async with aiohttp.ClientSession(connector=connector) as session:
            email = f"bench-{uuid.uuid4().hex[:8]}@example.com"
            body = {"email": email, "password": PASSWORD}
            async with session.post(base + "/register", json=body) as r:
                assert r.status == 201, await r.text()
            pairs = [await _login(session, base, email) for _ in range(n)]
            figures = []

            async def live(deadline: float, latencies: list[float]) -> int:
                errors = 0
                while time.perf_counter() < deadline:
                    status, _ = await _timed(latencies, session.get(base + LIVE))
                    errors += status != 200
                return errors

            figures.append(await _measure("liveness", proc.pid, live, n, secs))
            headers = [{"Authorization": f"Bearer {p['access_token']}"} for p in pairs]
            turn = iter(range(10**9))

            async def me(deadline: float, latencies: list[float]) -> int:
                errors, mine = 0, headers[next(turn) % n]
                while time.perf_counter() < deadline:
                    status, _ = await _timed(latencies, session.get(base + "/me", headers=mine))
                    errors += status != 200
                return errors

            figures.append(await _measure("/me", proc.pid, me, n, secs))
            tokens = [p["refresh_token"] for p in pairs]

            async def refresh(deadline: float, latencies: list[float]) -> int:
                index = next(turn) % n
                while time.perf_counter() < deadline:
                    request = session.post(base + "/refresh", json={"refresh_token": tokens[index]})
                    status, data = await _timed(latencies, request)
                    if status != 200:
                        return 1
                    tokens[index] = data["refresh_token"]
                return 0

            figures.append(await _measure("/refresh", proc.pid, refresh, n, secs))
            creds = client_credentials(env)
            form = {"grant_type": "client_credentials"}

            async def client_token(deadline: float, latencies: list[float]) -> int:
                errors = 0
                while time.perf_counter() < deadline:
                    request = session.post(base + "/oauth/token", data=form, headers=creds)
                    status, _ = await _timed(latencies, request)
                    errors += status != 200
                return errors

            figures.append(await _measure("client credentials", proc.pid, client_token, n, secs))
            async with session.post(base + "/oauth/token", data=form, headers=creds) as r:
                machine = {"token": (await r.json())["access_token"]}

            async def introspect(deadline: float, latencies: list[float]) -> int:
                errors = 0
                while time.perf_counter() < deadline:
                    request = session.post(base + "/oauth/introspect", data=machine, headers=creds)
                    status, _ = await _timed(latencies, request)
                    errors += status != 200
                return errors

            figures.append(await _measure("introspection", proc.pid, introspect, n, secs))

            async def login(deadline: float, latencies: list[float]) -> int:
                errors = 0
                while time.perf_counter() < deadline:
                    status, _ = await _timed(latencies, session.post(base + "/login", json=body))
                    errors += status != 200
                return errors

            figures.append(await _measure("login", proc.pid, login, min(n, 8), secs))
            devices = [await _passkey(session, base, headers[i]) for i in range(min(n, 8))]

            async def passkey_login(deadline: float, latencies: list[float]) -> int:
                errors, (device, handle) = 0, devices[next(turn) % len(devices)]
                while time.perf_counter() < deadline:
                    started = time.perf_counter()
                    async with session.post(base + "/login/passkey/options", json={}) as r:
                        begun = await r.json()
                    answer = device.assert_(begun["options"], ORIGIN, user_handle=handle)
                    body = {"ceremony_id": begun["ceremony_id"], "credential": answer}
                    async with session.post(base + "/login/passkey", json=body) as r:
                        await r.read()
                        errors += r.status != 200
                    latencies.append(time.perf_counter() - started)
                return errors

            figures.append(
                await _measure("passkey login", proc.pid, passkey_login, len(devices), secs)
            )
            # Liveness while logins saturate the server: is the event loop starved by bcrypt?
            saturate = asyncio.gather(*(login(time.perf_counter() + secs, []) for _ in range(8)))
            figures.append(await _measure("liveness under login", proc.pid, live, 4, secs))
            await saturate
        rss = ", ".join(f"{mib:.0f}" for mib in _rss_mib(proc.pid))
        print(f"server RSS after the run: {rss} MiB (the parent, then each worker)")
        return figures
    finally:
        stop_server(proc, args.backend, args.dsn, schema)


def main(argv: list[str] | None = None) -> None:
    """Parse ``argv`` (default: the command line), run, print one table row."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithm", default="RS256")
    parser.add_argument("--backend", default="sqlite", choices=["sqlite", "postgres", "memory"])
    parser.add_argument("--dsn", default="")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--bcrypt-rounds", type=int, default=12)
    parser.add_argument("--workers", type=int, default=1, help="server worker processes")
    args = parser.parse_args(argv)
    figures = asyncio.run(run(args))
    print(
        f"{args.algorithm}, {args.backend}, bcrypt {args.bcrypt_rounds}, {args.workers} worker(s),"
        f" {args.concurrency} clients, {args.seconds:g} s per scenario"
    )
    print("| scenario | req/s | p50 ms | p99 ms | server CPU µs/req | errors |")
    print("|---|---|---|---|---|---|")
    for f in figures:
        print(f.row())


if __name__ == "__main__":
    main()
