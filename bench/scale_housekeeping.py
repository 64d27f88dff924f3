"""``python -m bench.scale --housekeeping``: ``/refresh`` p50/p99 before and during the purge of
millions of expired rows (issue #35 point 3; the purge in batches of ``PURGE_BATCH`` rows, each
its own transaction: ADR 0029). PostgreSQL only.

Schema ``scale_pg_hk``: ``bench.seed`` with 100,000 users, 1M token rows, 1M audit rows (reused
when present), then ``--expired`` rows no rule needs any more, written by PostgreSQL itself
(``INSERT ... SELECT generate_series``): 30 % refresh tokens past their expiry, each in a
session of its own past its end (another 30 %), 20 % rotated-token records past their expiry,
20 % audit events older than ``audit.retention_days`` (90). Then ``authsvc serve`` on it, and
``--concurrency`` clients rotating refresh tokens: ``--seconds`` of that without the purge,
then ``authsvc purge`` (what the server's timer runs) in a subprocess while the load goes on,
until it exits.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import time
from datetime import UTC, datetime

import aiohttp
import psycopg

from bench import scale_db
from bench.scale_server import Server, login, percentile

BASE_USERS = 100_000


def _expired_sql(total: int, tag: str) -> list[tuple[str, str]]:
    """``(label, statement)`` pairs writing ``total`` expired rows (ids carry ``tag``)."""
    tokens = int(total * 0.3)
    rotated = int(total * 0.2)
    audit = total - 2 * tokens - rotated
    ids = "(SELECT array_agg(id) AS a, count(*) AS c FROM users)"
    return [
        (
            f"{tokens:,} expired refresh tokens",
            f"""
INSERT INTO refresh_tokens (token_hash, user_id, family_id, expires_at, session_expires_at,
                            created_at)
SELECT md5('{tag}t' || n) || md5('{tag}u' || n), u.a[1 + n % u.c], '{tag}' || n,
       now() - interval '1 day' - n * interval '1 second',
       now() + interval '10 days', now() - interval '40 days'
FROM generate_series(1, {tokens}) n, {ids} u""",
        ),
        (
            f"{tokens:,} sessions past their end",
            f"""
INSERT INTO sessions (id, user_id, created_at, last_used_at, expires_at, user_agent,
                      client_address)
SELECT '{tag}' || n, u.a[1 + n % u.c], now() - interval '100 days', now() - interval '40 days',
       now() - interval '10 days', 'Mozilla/5.0 (X11; Linux x86_64)', '198.51.100.9'
FROM generate_series(1, {tokens}) n, {ids} u""",
        ),
        (
            f"{rotated:,} expired rotated-token records",
            f"""
INSERT INTO rotated_refresh_tokens (token_hash, user_id, family_id, expires_at,
                                    session_expires_at, created_at, rotated_at)
SELECT md5('{tag}r' || n) || md5('{tag}s' || n), u.a[1 + n % u.c], '{tag}' || (n % {tokens} + 1),
       now() - interval '1 day' - n * interval '1 second', now() - interval '10 days',
       now() - interval '40 days', now() - interval '39 days'
FROM generate_series(1, {rotated}) n, {ids} u""",
        ),
        (
            f"{audit:,} audit events past retention",
            f"""
INSERT INTO audit_events (id, type, occurred_at, actor_id, user_id, org_id, client_address,
                          user_agent, details)
SELECT lpad(to_hex((extract(epoch FROM t) * 1000000)::bigint), 14, '0')
       || substr(md5('{tag}a' || n), 1, 18), 'token.refreshed', t, u.a[1 + n % u.c],
       u.a[1 + n % u.c], 'default', '203.0.113.9', 'Mozilla/5.0 (X11; Linux x86_64)',
       '{{"session_id":"0123456789abcdef0123456789abcdef"}}'::jsonb
FROM generate_series(1, {audit}) n, {ids} u,
     LATERAL (SELECT now() - interval '100 days' - n * interval '1 second' AS t) w""",
        ),
    ]


def add_expired(t: scale_db.Target, total: int) -> None:
    """Write ``total`` expired rows into ``t``'s schema (then ``ANALYZE`` those tables)."""
    tag = "hk" + secrets.token_hex(4)
    with psycopg.connect(t.dsn, autocommit=True) as conn:
        conn.execute(f"SET search_path = {t.schema}")
        for label, sql in _expired_sql(total, tag):
            started = time.perf_counter()
            conn.execute(sql)
            print(f"  {label}: {time.perf_counter() - started:.1f} s", flush=True)
        conn.execute("ANALYZE refresh_tokens, sessions, rotated_refresh_tokens, audit_events")


async def _load(server: Server, chains: asyncio.Queue[str], stop: asyncio.Event,
                concurrency: int) -> list[tuple[float, float]]:  # fmt: skip
    """``/refresh`` from ``concurrency`` clients until ``stop``; ``(start time, latency)`` of
    each success."""
    done: list[tuple[float, float]] = []
    async with aiohttp.ClientSession() as s:

        async def one() -> None:
            while not stop.is_set():
                token = await chains.get()
                t0 = time.perf_counter()
                async with s.post(server.base + "/refresh", json={"refresh_token": token}) as r:
                    body = await r.json()
                    chains.put_nowait(body.get("refresh_token", token))
                    if r.status == 200:
                        done.append((t0, time.perf_counter() - t0))

        await asyncio.gather(*(one() for _ in range(concurrency)))
    return done


def _line(name: str, latencies: list[float]) -> tuple[float, float]:
    ordered = sorted(latencies)
    p50, p99 = percentile(ordered, 0.5) * 1e3, percentile(ordered, 0.99) * 1e3
    print(f"| {name} | {len(ordered):,} | {p50:.1f} | {p99:.1f} |")
    return p50, p99


async def run(args: argparse.Namespace) -> None:
    """Seed (or reuse) the base, add the expired rows, measure, print the comparison."""
    base = scale_db.target("postgres", BASE_USERS, args.dsn, args.workdir)
    t = scale_db.Target("postgres", BASE_USERS, base.tokens, base.audit, args.dsn, args.workdir,
                        tag="hk")  # fmt: skip
    scale_db.seed(t)
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC: adding {args.expired:,} expired rows to "
          f"{t.schema}", flush=True)  # fmt: skip
    add_expired(t, args.expired)
    server = Server(t)
    await server.start()
    try:
        chains: asyncio.Queue[str] = asyncio.Queue()
        async with aiohttp.ClientSession() as s:
            for i in range(args.concurrency):
                pair = await login(s, server.base, f"user{3 + i * 20}@seed.example.com")
                chains.put_nowait(pair["refresh_token"])
        stop = asyncio.Event()
        warm = asyncio.create_task(_load(server, chains, stop, args.concurrency))
        await asyncio.sleep(2.0)
        stop.set()
        await warm
        stop = asyncio.Event()
        before_task = asyncio.create_task(_load(server, chains, stop, args.concurrency))
        await asyncio.sleep(args.seconds)
        stop.set()
        before = [lat for _, lat in await before_task]
        stop = asyncio.Event()
        during_task = asyncio.create_task(_load(server, chains, stop, args.concurrency))
        started = time.perf_counter()
        purge = server.cli("purge")
        out, _ = await asyncio.to_thread(purge.communicate)
        purge_s = time.perf_counter() - started
        stop.set()
        during = [lat for t0, lat in await during_task if t0 < started + purge_s]
    finally:
        server.stop()
    print(f"\n{out.strip()} in {purge_s:.1f} s (authsvc purge, exit status {purge.returncode});"
          f" /refresh from {args.concurrency} clients\n")  # fmt: skip
    print("| /refresh | requests | p50 ms | p99 ms |")
    print("|---|---|---|---|")
    b50, b99 = _line("without the purge", before)
    d50, d99 = _line("during the purge", during)
    if b50 and b99:
        print(f"| during / without | | {d50 / b50:.2f}× | {d99 / b99:.2f}× |")
