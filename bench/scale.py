"""``make bench-scale``: the hot and admin paths at 0, 100k and 1M users (issue #35), and
housekeeping at size (``--housekeeping``, ``bench.scale_housekeeping``). Not a test.

    .venv/bin/python -m bench.scale --dsn postgresql://postgres@127.0.0.1:5432/test \\
        [--sizes 0,100000,1000000] [--backends postgres,sqlite] [--sqlite-max 100000] \\
        [--requests 300] [--login-requests 40] [--concurrency 4] [--rounds 1] \\
        [--workdir DIR] [--json-out FILE]

For each backend and size it seeds a database with ``bench.seed`` (10 refresh-token rows and
10 audit rows per user: 10M each at 1M users; see ``bench.scale_db``). A complete database left
by an earlier run is reused: PostgreSQL schema ``scale_pg_<users>``, SQLite file
``<workdir>/scale_<users>.db`` (workdir ``/tmp/authsvc-scale``); drop them by hand. Then it
starts ``authsvc serve`` on it (one worker) and times each path: ``--requests`` requests
(``--login-requests`` for ``/login``, whose bcrypt dominates), ``--concurrency`` at a time,
after 10 unmeasured ones. Prints per path and size: p50 and p99 latency, the server process's
CPU per request (``/proc/<pid>/stat``), PostgreSQL's (the backends of the server's connections,
found by their ``application_name``), and the ratios to size 0 of the same backend. Client,
server and database share the machine's cores: on a shared machine use ``--rounds 3`` (sizes
interleaved, medians reported), so that a change in the machine's load is not read as the
effect of size.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp

from application.shared.pagination import encode_cursor
from bench import scale_db
from bench.http_load import client_credentials
from bench.scale_db import SESSIONS_USER, Target
from bench.scale_server import PASSWORD, Figures, Server, login, measure, status_of

ORG_ADMIN = "user1@seed.example.com"
"""The first user of organization ``org-00001``: an org_admin (``bench.seed``)."""
SUPERADMIN = "user0@seed.example.com"


def _login_emails(users: int, count: int = 64) -> list[str]:
    """Seeded users who can log in with a password alone: not disabled (every 500th), no MFA
    (every 20th from 7), spread over the id range."""
    step = max(1, users // count)
    picks = [i for i in range(0, users, step) if i % 20 != 7 and i % 500 != 499]
    return [f"user{i}@seed.example.com" for i in picks[:count]]


async def run_paths(t: Target, args: argparse.Namespace) -> list[Figures]:
    """Start a server on ``t`` and time every path; returns one ``Figures`` per path."""
    server = Server(t)
    deep = scale_db.deep_user_id(t)
    audited = scale_db.user_id_of(t, f"user{min(5, t.seed_users - 1)}@seed.example.com")
    await server.start()
    base, n, c = server.base, args.requests, args.concurrency
    out: list[Figures] = []
    try:
        connector = aiohttp.TCPConnector(limit=64)
        async with aiohttp.ClientSession(connector=connector) as s:
            emails = _login_emails(t.seed_users)
            admin = {
                "Authorization": f"Bearer {(await login(s, base, SUPERADMIN))['access_token']}"
            }
            org_admin = {
                "Authorization": f"Bearer {(await login(s, base, ORG_ADMIN))['access_token']}"
            }
            many = {
                "Authorization": f"Bearer {(await login(s, base, SESSIONS_USER))['access_token']}"
            }
            pairs = [await login(s, base, emails[i % len(emails)]) for i in range(c)]
            chains: asyncio.Queue[str] = asyncio.Queue()
            for p in pairs:
                chains.put_nowait(p["refresh_token"])
            me = {"Authorization": f"Bearer {pairs[0]['access_token']}"}
            client = client_credentials(server.env)
            form = {"grant_type": "client_credentials"}
            async with s.post(base + "/oauth/token", data=form, headers=client) as r:
                granted = await r.json()
            if "access_token" not in granted:
                raise SystemExit(f"client credentials refused: {granted}")
            machine = granted["access_token"]

            async def do_login(s: aiohttp.ClientSession, i: int) -> int:
                body = {"email": emails[i % len(emails)], "password": PASSWORD}
                return await status_of(s.post(base + "/login", json=body))

            async def do_refresh(s: aiohttp.ClientSession, i: int) -> int:
                token = await chains.get()
                async with s.post(base + "/refresh", json={"refresh_token": token}) as r:
                    body = await r.json()
                    chains.put_nowait(body.get("refresh_token", token))
                    return int(r.status)

            def get(path: str, headers: dict[str, str]) -> Callable[[Any, int], Any]:
                return lambda s, i: status_of(s.get(base + path, headers=headers))

            since = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
            cursor = encode_cursor("users", deep)
            paths: list[tuple[str, Any, int, int]] = [
                ("POST /login", do_login, args.login_requests, min(c, 2)),
                ("POST /refresh", do_refresh, n, c),
                ("GET /me", get("/me", me), n, c),
                ("client credentials", lambda s, i: status_of(
                    s.post(base + "/oauth/token", data=form, headers=client)), n, c),
                ("introspection", lambda s, i: status_of(s.post(
                    base + "/oauth/introspect", data={"token": machine}, headers=client)), n, c),
                ("GET /users (first page)", get("/users?limit=50", admin), n, c),
                ("GET /users (deep page, 90 %)", get(f"/users?limit=50&cursor={cursor}",
                                                     admin), n, c),
                ("GET /audit-events", get("/audit-events?limit=50", admin), n, c),
                ("GET /audit-events?type= (rare)", get(
                    "/audit-events?limit=50&type=user.registered", admin), n, c),
                ("GET /audit-events?user_id=", get(f"/audit-events?limit=50&user_id={audited}",
                                                   admin), n, c),
                ("GET /audit-events?org_id=", get("/audit-events?limit=50&org_id=org-00001",
                                                  admin), n, c),
                ("GET /audit-events?since=", get(f"/audit-events?limit=50&since={since}",
                                                 admin), n, c),
                ("GET /audit-events?type= (org_admin)", get(
                    "/audit-events?limit=50&type=user.registered", org_admin), n, c),
                ("GET /me/sessions (1,000 sessions)", get("/me/sessions", many), n, c),
            ]  # fmt: skip
            for name, request, count, conc in paths:
                f = await measure(server, s, name, request, count, conc)
                print(f"  {name:<38} p50 {f.p50_ms:8.1f} ms  p99 {f.p99_ms:8.1f} ms  "
                      f"server {f.app_cpu_us:9,.0f} µs  db {_us(f.db_cpu_us)}  "
                      f"errors {f.errors}", flush=True)  # fmt: skip
                out.append(f)
    finally:
        server.stop()
    return out


def median_figures(rounds: list[list[Figures]]) -> list[Figures]:
    """Per path, the median of each figure over ``rounds`` (errors summed)."""
    out = []
    for i, first in enumerate(rounds[0]):
        same = [r[i] for r in rounds]
        dbs = [f.db_cpu_us for f in same if f.db_cpu_us is not None]
        out.append(Figures(
            first.path, sum(f.requests for f in same),
            statistics.median(f.p50_ms for f in same), statistics.median(f.p99_ms for f in same),
            statistics.median(f.app_cpu_us for f in same),
            statistics.median(dbs) if dbs else None, sum(f.errors for f in same),
        ))  # fmt: skip
    return out


def _us(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _ratio(value: float | None, base: float | None) -> str:
    if value is None or not base:
        return "-"
    return f"{value / base:.2f}×"


def table(backend: str, results: dict[int, list[Figures]]) -> str:
    """A markdown table: per path and size, the figures and their ratios to the smallest size
    (0 when measured)."""
    sizes = sorted(results)
    base = {f.path: f for f in results[sizes[0]]}
    lines = [
        f"{backend}: ratios (×) to {sizes[0]:,} users",
        "",
        "| path | users | p50 ms | p99 ms | server CPU µs/req | PostgreSQL CPU µs/req "
        "| p50 × | p99 × | CPU × (server + db) | errors |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for path in base:
        for size in sizes:
            f = next(x for x in results[size] if x.path == path)
            b = base[path]
            total = f.app_cpu_us + (f.db_cpu_us or 0.0)
            btotal = b.app_cpu_us + (b.db_cpu_us or 0.0)
            lines.append(
                f"| {path} | {size:,} | {f.p50_ms:.1f} | {f.p99_ms:.1f} | {f.app_cpu_us:,.0f} "
                f"| {_us(f.db_cpu_us)} | {_ratio(f.p50_ms, b.p50_ms)} "
                f"| {_ratio(f.p99_ms, b.p99_ms)} | {_ratio(total, btotal)} | {f.errors} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Parse ``argv``; run the path benchmark (or ``--housekeeping``); print the tables."""
    parser = argparse.ArgumentParser(prog="python -m bench.scale",
                                     description=(__doc__ or "").splitlines()[0])  # fmt: skip
    parser.add_argument("--dsn", default=os.environ.get("AUTHSVC_TEST_POSTGRES_DSN", ""))
    parser.add_argument("--sizes", default="0,100000,1000000", help="user counts, comma-separated")
    parser.add_argument("--backends", default="postgres,sqlite")
    parser.add_argument("--sqlite-max", type=int, default=100_000, help="largest SQLite size")
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--login-requests", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "authsvc-scale"))
    parser.add_argument("--rounds", type=int, default=1,
                        help="times to measure each size, interleaved (medians)")  # fmt: skip
    parser.add_argument("--json-out", help="also write the figures as JSON here")
    parser.add_argument("--housekeeping", action="store_true",
                        help="measure /refresh p99 before and during a purge instead")  # fmt: skip
    parser.add_argument("--expired", type=int, default=5_000_000,
                        help="--housekeeping: expired rows to purge")  # fmt: skip
    parser.add_argument("--seconds", type=float, default=20.0,
                        help="--housekeeping: seconds of /refresh before the purge")  # fmt: skip
    args = parser.parse_args(argv)
    if "postgres" in args.backends and not args.dsn:
        parser.error("--dsn (or AUTHSVC_TEST_POSTGRES_DSN) is needed for PostgreSQL")
    os.makedirs(args.workdir, exist_ok=True)
    if args.housekeeping:
        from bench import scale_housekeeping

        asyncio.run(scale_housekeeping.run(args))
        return
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} CPUs "
          f"({platform.processor() or platform.machine()}), {args.concurrency} concurrent "
          f"clients, {args.requests} requests per path "
          f"({args.login_requests} for /login)")  # fmt: skip
    tables, dump = [], {}
    for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
        runs: dict[int, list[list[Figures]]] = {}
        targets = [scale_db.target(backend, size, args.dsn, args.workdir) for size in sizes
                   if backend != "sqlite" or size <= args.sqlite_max]  # fmt: skip
        for t in targets:
            scale_db.seed(t)
        for round_ in range(1, args.rounds + 1):
            for t in targets:
                print(f"measuring {t.label} (round {round_} of {args.rounds})", flush=True)
                runs.setdefault(t.users, []).append(asyncio.run(run_paths(t, args)))
        results = {size: median_figures(r) for size, r in runs.items()}
        if results:
            tables.append(table(backend, results))
            dump[backend] = {str(k): [vars(f) for f in v] for k, v in results.items()}
    print()
    print("\n\n".join(tables))
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as fh:
            json.dump(dump, fh, indent=1)


if __name__ == "__main__":
    main()
