"""Rough HTTP figures for one worker: login latency, /me and /refresh requests per second.

Starts ``authsvc serve`` in a subprocess (temporary key dir and database unless told otherwise),
then drives it from this process with aiohttp over loopback. Prints a table; not a test.

    .venv/bin/python -m bench.http_load [--algorithm ML-DSA-65] [--backend postgres --dsn DSN]
                                        [--seconds 5] [--concurrency 32] [--bcrypt-rounds 12]

Client and server share the machine's cores, so figures are lower bounds, useful to compare.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from typing import Any

import aiohttp

PASSWORD = "correct horse battery"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _wait_ready(base: str, proc: subprocess.Popen[bytes]) -> None:
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


async def _rate(worker: Any, concurrency: int, seconds: float) -> tuple[float, int]:
    """Run ``worker(deadline)`` ``concurrency`` times at once; return (requests/s, errors)."""
    deadline = time.perf_counter() + seconds
    start = time.perf_counter()
    results = await asyncio.gather(*(worker(deadline) for _ in range(concurrency)))
    elapsed = time.perf_counter() - start
    done = sum(r[0] for r in results)
    errors = sum(r[1] for r in results)
    return done / elapsed, errors


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """Start a server with ``args`` and measure; returns the figures."""
    tmp = tempfile.mkdtemp(prefix="authsvc-bench-")
    port = _free_port()
    env = {
        **os.environ,
        "AUTHSVC_AUTH__ALGORITHM": args.algorithm,
        "AUTHSVC_AUTH__KEY_DIR": os.path.join(tmp, "keys"),
        "AUTHSVC_AUTH__BCRYPT_ROUNDS": str(args.bcrypt_rounds),
        "AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "1000000",
        "AUTHSVC_STORAGE__BACKEND": args.backend,
        "AUTHSVC_STORAGE__SQLITE_PATH": os.path.join(tmp, "authsvc.db"),
        "AUTHSVC_SERVER__PORT": str(port),
    }
    if args.dsn:
        env["AUTHSVC_STORAGE__POSTGRES_DSN"] = args.dsn
    proc = subprocess.Popen(
        [sys.executable, "-m", "entrypoints.cli", "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        await _wait_ready(base, proc)
        connector = aiohttp.TCPConnector(limit=args.concurrency)
        async with aiohttp.ClientSession(connector=connector) as session:
            email = f"bench-{uuid.uuid4().hex[:8]}@example.com"
            body = {"email": email, "password": PASSWORD}
            async with session.post(base + "/register", json=body) as r:
                assert r.status == 201, await r.text()
            login_ms = []
            for _ in range(5):
                t0 = time.perf_counter()
                pair = await _login(session, base, email)
                login_ms.append((time.perf_counter() - t0) * 1000)
            headers = {"Authorization": f"Bearer {pair['access_token']}"}

            async def me(deadline: float) -> tuple[int, int]:
                done = errors = 0
                while time.perf_counter() < deadline:
                    async with session.get(base + "/me", headers=headers) as r:
                        await r.read()
                        done += r.status == 200
                        errors += r.status != 200
                return done, errors

            me_rps, me_err = await _rate(me, args.concurrency, args.seconds)

            # Each refresh chain needs its own session (one login each).
            chains = [await _login(session, base, email) for _ in range(args.concurrency)]
            tokens = [c["refresh_token"] for c in chains]

            async def refresh_worker(index: int, deadline: float) -> tuple[int, int]:
                done = errors = 0
                while time.perf_counter() < deadline:
                    body = {"refresh_token": tokens[index]}
                    async with session.post(base + "/refresh", json=body) as r:
                        data = await r.json()
                        if r.status == 200:
                            tokens[index] = data["refresh_token"]
                            done += 1
                        else:
                            errors += 1
                            break
                return done, errors

            counter = iter(range(args.concurrency))
            refresh_rps, refresh_err = await _rate(
                lambda deadline: refresh_worker(next(counter), deadline),
                args.concurrency,
                args.seconds,
            )
        return {
            "algorithm": args.algorithm,
            "backend": args.backend,
            "bcrypt_rounds": args.bcrypt_rounds,
            "login_ms": statistics.median(login_ms),
            "me_rps": me_rps,
            "me_errors": me_err,
            "refresh_rps": refresh_rps,
            "refresh_errors": refresh_err,
        }
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main() -> None:
    """Parse arguments, run, print one table row."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithm", default="RS256")
    parser.add_argument("--backend", default="sqlite", choices=["sqlite", "postgres", "memory"])
    parser.add_argument("--dsn", default="")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--bcrypt-rounds", type=int, default=12)
    args = parser.parse_args()
    r = asyncio.run(run(args))
    print("| algorithm | storage | bcrypt cost | login median ms | /me req/s | /refresh req/s |")
    print("|---|---|---|---|---|---|")
    print(
        f"| {r['algorithm']} | {r['backend']} | {r['bcrypt_rounds']} | {r['login_ms']:.0f} "
        f"| {r['me_rps']:.0f} | {r['refresh_rps']:.0f} |"
    )
    if r["me_errors"] or r["refresh_errors"]:
        print(f"errors: /me {r['me_errors']}, /refresh {r['refresh_errors']}")


if __name__ == "__main__":
    main()
