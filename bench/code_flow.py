"""Authorization-code flows per second (issue 31 point 5; docs/reference/oauth-and-oidc.md), beside
/login and /refresh measured in the same sitting.

Starts ``authsvc serve`` in a subprocess (temporary key dir and SQLite database unless told
otherwise), registers a confidential code-flow client (``authsvc clients create
--skip-consent``), signs a user in once on the hosted login page (GET /ui/login for the CSRF
cookie, POST /ui/login), then runs ``--flows`` times, ``--concurrency`` at once, the flow a
returning user's app runs: GET /oauth/authorize with the hosted-session cookie (303 to the
client with a code) → POST /oauth/token (``authorization_code`` + PKCE S256, ``scope=openid``:
an ID token and an access token, a token family started). Then ``--logins`` POST /login
(bcrypt) and ``--refreshes`` POST /refresh (rotation), the same way.

Prints per scenario: operations per second, p50/p99 latency (ms) of one operation (a flow is
two requests), and the server's CPU time per operation (µs, user + system from
``/proc/<pid>/stat`` of the server and its workers: steadier than the rate on a shared
machine). Not a test; ``make bench-code-flow`` runs it.

    .venv/bin/python -m bench.code_flow [--flows 300] [--logins 40] [--refreshes 300]
        [--concurrency 8] [--algorithm RS256] [--backend sqlite|postgres --dsn DSN]
        [--bcrypt-rounds 12] [--workers 1]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import secrets
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp

from bench.http_load import PASSWORD, cpu_seconds, start_server, stop_server, wait_ready

ISSUER = "http://localhost"
REDIRECT = "https://app.example.com/cb"

Operation = Callable[[], Awaitable[bool]]


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _cookie(response: aiohttp.ClientResponse, name: str) -> str:
    for header in response.headers.getall("Set-Cookie", []):
        jar: SimpleCookie = SimpleCookie()
        jar.load(header)
        if name in jar:
            return jar[name].value
    raise SystemExit(f"no {name} cookie: {response.status}")


def _code_client(env: dict[str, str]) -> tuple[str, str]:
    """(client_id, client_secret) of a new confidential code-flow client (no consent page)."""
    out = subprocess.run(
        [sys.executable, "-m", "entrypoints.cli", "clients", "create", "bench-app",
         "--grant-type", "authorization_code", "--grant-type", "refresh_token",
         "--redirect-uri", REDIRECT, "--skip-consent"],
        env=env, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    values = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    return values["client_id"], values["client_secret"]


async def _hosted_login(session: aiohttp.ClientSession, base: str, email: str) -> str:
    """Sign ``email`` in on the hosted login page once; returns the hosted-session cookie."""
    async with session.get(base + "/ui/login", params={"return_to": "/ui/signed-in"}) as r:
        assert r.status == 200, await r.text()
        csrf = _cookie(r, "authsvc_csrf")
    form = {"email": email, "password": PASSWORD, "csrf_token": csrf, "return_to": "/ui/signed-in"}
    headers = {"Origin": ISSUER, "Cookie": f"authsvc_csrf={csrf}"}
    async with session.post(base + "/ui/login", data=form, headers=headers,
                            allow_redirects=False) as r:  # fmt: skip
        assert r.status == 303, await r.text()
        return _cookie(r, "authsvc_session")


async def _count(
    name: str, pid: int, operation: Operation, total: int, concurrency: int
) -> dict[str, Any]:
    """Run ``operation`` ``total`` times, ``concurrency`` at once; its figures."""
    latencies: list[float] = []
    errors = 0
    left = iter(range(total))

    async def worker() -> None:
        nonlocal errors
        for _ in left:
            t0 = time.perf_counter()
            if await operation():
                latencies.append(time.perf_counter() - t0)
            else:
                errors += 1

    cpu0 = cpu_seconds(pid)
    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - start
    cpu = cpu_seconds(pid) - cpu0
    ordered = sorted(latencies) or [0.0]
    return {
        "name": name, "count": len(latencies), "per_s": len(latencies) / elapsed,
        "p50": statistics.median(ordered) * 1e3,
        "p99": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e3,
        "cpu_us": cpu / max(1, len(latencies)) * 1e6, "errors": errors,
    }  # fmt: skip


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Start a server with ``args``, measure the three scenarios; returns their figures."""
    proc, port, schema, env = start_server(
        args, {"AUTHSVC_AUTH__ISSUER": ISSUER, "AUTHSVC_EMAIL__BACKEND": "none"}
    )
    base = f"http://127.0.0.1:{port}"
    try:
        await wait_ready(base, proc)
        await asyncio.sleep(1.0 if args.workers > 1 else 0.0)
        client_id, secret = _code_client(env)
        basic = aiohttp.encode_basic_auth(client_id, secret)
        connector = aiohttp.TCPConnector(limit=max(args.concurrency, 16))
        async with aiohttp.ClientSession(connector=connector) as session:
            email = f"bench-{uuid.uuid4().hex[:8]}@example.com"
            body = {"email": email, "password": PASSWORD}
            async with session.post(base + "/register", json=body) as r:
                assert r.status == 201, await r.text()
            cookie = await _hosted_login(session, base, email)
            browser = {"Cookie": f"authsvc_session={cookie}"}

            async def flow() -> bool:
                verifier, challenge = _pkce()
                params = {"response_type": "code", "client_id": client_id,
                          "redirect_uri": REDIRECT, "scope": "openid", "state": "s",
                          "nonce": "n", "code_challenge": challenge,
                          "code_challenge_method": "S256"}  # fmt: skip
                async with session.get(base + "/oauth/authorize", params=params, headers=browser,
                                       allow_redirects=False) as r:  # fmt: skip
                    location = r.headers.get("Location", "")
                if r.status != 303 or not location.startswith(REDIRECT):
                    return False
                code = parse_qs(urlsplit(location).query)["code"][0]
                form = {"grant_type": "authorization_code", "code": code,
                        "redirect_uri": REDIRECT, "code_verifier": verifier}  # fmt: skip
                async with session.post(base + "/oauth/token", data=form,
                                        headers={"Authorization": basic}) as r:  # fmt: skip
                    answer = await r.json()
                return r.status == 200 and "id_token" in answer

            figures = [await _count("code flow (authorize + token)", proc.pid, flow,
                                    args.flows, args.concurrency)]  # fmt: skip

            async def login() -> bool:
                async with session.post(base + "/login", json=body) as r:
                    await r.read()
                    return r.status == 200

            figures.append(await _count("/login", proc.pid, login, args.logins, args.concurrency))
            async with session.post(base + "/login", json=body) as r:
                tokens = [(await r.json())["refresh_token"]]
            for _ in range(args.concurrency - 1):
                async with session.post(base + "/login", json=body) as r:
                    tokens.append((await r.json())["refresh_token"])
            turn = iter(range(10**9))

            async def refresh() -> bool:
                index = next(turn) % len(tokens)
                async with session.post(base + "/refresh",
                                        json={"refresh_token": tokens[index]}) as r:  # fmt: skip
                    if r.status != 200:
                        return False
                    tokens[index] = (await r.json())["refresh_token"]
                    return True

            figures.append(await _count("/refresh", proc.pid, refresh, args.refreshes,
                                        len(tokens)))  # fmt: skip
        return figures
    finally:
        stop_server(proc, args.backend, args.dsn, schema)


def main(argv: list[str] | None = None) -> None:
    """Parse ``argv`` (default: the command line), run, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=300)
    parser.add_argument("--logins", type=int, default=40)
    parser.add_argument("--refreshes", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--algorithm", default="RS256")
    parser.add_argument("--backend", default="sqlite", choices=["sqlite", "postgres", "memory"])
    parser.add_argument("--dsn", default="")
    parser.add_argument("--bcrypt-rounds", type=int, default=12)
    parser.add_argument("--workers", type=int, default=1, help="server worker processes")
    args = parser.parse_args(argv)
    figures = asyncio.run(run(args))
    print(
        f"{args.algorithm}, {args.backend}, bcrypt {args.bcrypt_rounds}, {args.workers} worker(s),"
        f" {args.concurrency} at once"
    )
    print("| scenario | count | per second | p50 ms | p99 ms | server CPU µs each | errors |")
    print("|---|---|---|---|---|---|---|")
    for f in figures:
        print(f"| {f['name']} | {f['count']} | {f['per_s']:,.1f} | {f['p50']:.1f} "
              f"| {f['p99']:.1f} | {f['cpu_us']:,.0f} | {f['errors']} |")  # fmt: skip


if __name__ == "__main__":
    main()
