"""The databases ``bench.scale`` measures: one per backend and size, seeded with ``bench.seed``
(reused when a previous run left it complete), plus what the seed does not make — one user with
1,000 sessions — and the PostgreSQL backends' CPU time (issue #35).

Names: PostgreSQL schema ``scale_pg_<users>``, SQLite file ``<workdir>/scale_<users>.db``.
Size 0 is "empty": the seed needs at least one user, so it holds 3 users (the superadmin
``user0``, the org_admin ``user1``, ``user2``), 2 organizations, 2 OAuth clients, no tokens and no
audit rows besides the 1,000 sessions of ``user2``.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

from adapters.persistence.sql import columns as cols
from adapters.persistence.times import to_micros

SESSIONS_USER = "user2@seed.example.com"
"""The user given ``MANY_SESSIONS`` live sessions (``GET /me/sessions``)."""
MANY_SESSIONS = 1_000
_AGENT = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"


@dataclasses.dataclass(frozen=True)
class Target:
    """One database: ``backend`` (``postgres``/``sqlite``), users, token and audit rows."""

    backend: str
    users: int
    tokens: int
    audit: int
    dsn: str = ""
    workdir: str = ""
    tag: str = ""
    """Names the database instead of the user count (``scale_pg_<tag>``)."""

    @property
    def seed_users(self) -> int:
        """Users actually seeded: 3 for size 0 (see the module docstring)."""
        return max(self.users, 3)

    @property
    def schema(self) -> str:
        """The PostgreSQL schema of this size."""
        return f"scale_pg_{self.tag or self.users}"

    @property
    def path(self) -> str:
        """The SQLite file of this size."""
        return os.path.join(self.workdir, f"scale_{self.tag or self.users}.db")

    @property
    def label(self) -> str:
        """``postgres 1,000,000 users / 10,000,000 tokens / 10,000,000 audit``."""
        return (
            f"{self.backend} {self.users:,} users / {self.tokens:,} token rows / "
            f"{self.audit:,} audit rows"
        )


def target(backend: str, users: int, dsn: str, workdir: str) -> Target:
    """The target of ``users`` users: 10 token rows and 10 audit rows per user (10M each at
    1M users, 1M each at 100k), none at size 0."""
    return Target(backend, users, users * 10, users * 10, dsn, workdir)


def _pg_users(dsn: str, schema: str) -> int | None:
    """How many users ``schema`` holds (None: no such schema or table)."""
    import psycopg

    with psycopg.connect(dsn) as conn:
        found = conn.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = %s"
            " AND table_name = 'users'",
            (schema,),
        ).fetchone()
        if not found:
            return None
        return int(conn.execute(f"SELECT count(*) FROM {schema}.users").fetchone()[0])  # type: ignore[index]


def existing_users(t: Target) -> int | None:
    """Users in ``t``'s database if it exists (None if not)."""
    if t.backend == "postgres":
        return _pg_users(t.dsn, t.schema)
    if not os.path.exists(t.path):
        return None
    with sqlite3.connect(t.path) as conn:
        try:
            return int(conn.execute("SELECT count(*) FROM users").fetchone()[0])
        except sqlite3.Error:
            return None


def drop(t: Target) -> None:
    """Remove ``t``'s database (schema or file)."""
    if t.backend == "postgres":
        import psycopg

        with psycopg.connect(t.dsn, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {t.schema} CASCADE")
    elif os.path.exists(t.path):
        os.remove(t.path)


def seed(t: Target) -> None:
    """Seed ``t`` with ``bench.seed`` (output passed through), unless a complete database of
    that size is there (a run interrupted while seeding is dropped and seeded again)."""
    have = existing_users(t)
    if have == t.seed_users and _complete(t):
        if not _has_many_sessions(t):
            add_many_sessions(t)
        print(f"reusing {t.label} ({t.schema if t.backend == 'postgres' else t.path})")
        return
    if have is not None:
        drop(t)
    where = ["--dsn", t.dsn, "--schema", t.schema] if t.backend == "postgres" else ["--db", t.path]
    command = [sys.executable, "-m", "bench.seed", "--backend", t.backend, *where,
               "--users", str(t.seed_users), "--tokens", str(t.tokens),
               "--audit-events", str(t.audit)]  # fmt: skip
    print(f"seeding {t.label}: {' '.join(command[1:])}", flush=True)
    subprocess.run(command, check=True)
    add_many_sessions(t)


def _session_rows(user_id: str, when: Any) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """``MANY_SESSIONS`` live sessions of ``user_id`` and one live token each."""
    now = datetime.now(UTC)
    sessions, tokens = [], []
    for n in range(MANY_SESSIONS):
        created = now - timedelta(days=30, seconds=-n * 60)
        sid = "scale" + secrets.token_hex(13)
        sessions.append((sid, user_id, when(created), when(created),
                         when(created + timedelta(days=90)), _AGENT,
                         f"198.51.100.{n % 250 + 1}", None, None))  # fmt: skip
        tokens.append((secrets.token_hex(32), user_id, sid, when(now + timedelta(days=20)),
                       when(created + timedelta(days=90)), when(created)))  # fmt: skip
    return sessions, tokens


def _complete(t: Target) -> bool:
    """Did the seed finish (its last table, ``oauth_clients``, holds rows)?"""
    return _count(t, "SELECT count(*) FROM {}oauth_clients") > 0


def _has_many_sessions(t: Target) -> bool:
    return _count(t, "SELECT count(*) FROM {}sessions WHERE id LIKE 'scale%'") >= MANY_SESSIONS


def _count(t: Target, sql: str) -> int:
    """``sql`` (``{}`` where the schema prefix goes) run on ``t``: its one integer."""
    if t.backend == "postgres":
        import psycopg

        with psycopg.connect(t.dsn) as conn:
            row = conn.execute(sql.format(t.schema + ".")).fetchone()
    else:
        with sqlite3.connect(t.path) as conn:
            row = conn.execute(sql.format("")).fetchone()
    return 0 if row is None else int(row[0])


def add_many_sessions(t: Target) -> None:
    """Give ``SESSIONS_USER`` ``MANY_SESSIONS`` live sessions (then ``ANALYZE`` them)."""
    if t.backend == "postgres":
        import psycopg

        with psycopg.connect(t.dsn) as conn:
            conn.execute(f"SET search_path = {t.schema}")
            row = conn.execute("SELECT id FROM users WHERE email = %s", (SESSIONS_USER,))
            user_id = row.fetchone()[0]  # type: ignore[index]
            sessions, tokens = _session_rows(user_id, lambda at: at)
            with conn.cursor() as cur:
                cur.executemany(f"INSERT INTO sessions ({cols.SESSIONS}) VALUES"
                                " (%s, %s, %s, %s, %s, %s, %s, %s, %s)", sessions)  # fmt: skip
                cur.executemany(f"INSERT INTO refresh_tokens ({cols.TOKENS}) VALUES"
                                " (%s, %s, %s, %s, %s, %s)", tokens)  # fmt: skip
            conn.execute("ANALYZE sessions, refresh_tokens")
        return
    with sqlite3.connect(t.path) as conn:
        user_id = conn.execute("SELECT id FROM users WHERE email = ?", (SESSIONS_USER,)).fetchone()[
            0
        ]
        sessions, tokens = _session_rows(user_id, to_micros)
        conn.executemany(f"INSERT INTO sessions ({cols.SESSIONS})"
                         " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", sessions)  # fmt: skip
        conn.executemany(f"INSERT INTO refresh_tokens ({cols.TOKENS}) VALUES (?, ?, ?, ?, ?, ?)",
                         tokens)  # fmt: skip
        conn.execute("ANALYZE")


def deep_user_id(t: Target, fraction: float = 0.9) -> str:
    """The id of the user at ``fraction`` of the id order (where a deep page starts)."""
    sql = "SELECT id FROM {}users ORDER BY id LIMIT 1 OFFSET {}"
    offset = int(t.seed_users * fraction)
    if t.backend == "postgres":
        import psycopg

        with psycopg.connect(t.dsn) as conn:
            return str(conn.execute(sql.format(t.schema + ".", offset)).fetchone()[0])  # type: ignore[index]
    with sqlite3.connect(t.path) as conn:
        return str(conn.execute(sql.format("", offset)).fetchone()[0])


def user_id_of(t: Target, email: str) -> str:
    """The id of the seeded user with ``email``."""
    if t.backend == "postgres":
        import psycopg

        with psycopg.connect(t.dsn) as conn:
            sql = f"SELECT id FROM {t.schema}.users WHERE email = %s"
            return str(conn.execute(sql, (email,)).fetchone()[0])  # type: ignore[index]
    with sqlite3.connect(t.path) as conn:
        return str(conn.execute("SELECT id FROM users WHERE email = ?", (email,)).fetchone()[0])


class PgCpu:
    """CPU seconds of the PostgreSQL backends serving connections named ``application_name``
    (``pg_stat_activity``; ``/proc/<pid>/stat``: PostgreSQL must run on this machine)."""

    def __init__(self, dsn: str, application_name: str) -> None:
        self._dsn = dsn
        self._name = application_name

    def snapshot(self) -> dict[int, float]:
        """User + system CPU seconds of each such backend now, by pid (empty when ``/proc``
        cannot tell)."""
        import psycopg

        with psycopg.connect(self._dsn) as conn:
            rows = conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (self._name,)
            ).fetchall()
        tick = os.sysconf("SC_CLK_TCK")
        found = {}
        for (pid,) in rows:
            try:
                with open(f"/proc/{pid}/stat") as fh:
                    fields = fh.read().rpartition(")")[2].split()
            except OSError:
                continue
            found[pid] = (int(fields[11]) + int(fields[12])) / tick
        return found

    @staticmethod
    def spent(before: dict[int, float], after: dict[int, float]) -> float:
        """CPU seconds spent between two snapshots (a backend new in ``after`` counts whole)."""
        return sum(cpu - before.get(pid, 0.0) for pid, cpu in after.items())
