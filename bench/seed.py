"""Fill a database with users, sessions, refresh tokens, audit events and OAuth clients, fast,
for scale benchmarks (issue #35; docs/scaling.md).

    .venv/bin/python -m bench.seed --backend postgres --dsn DSN [--schema S] \\
        --users N --tokens M --audit-events K [--live-tokens-out FILE]
    .venv/bin/python -m bench.seed --backend sqlite --db FILE --users N --tokens M \\
        --audit-events K [--live-tokens-out FILE]

The schema comes from the project's own migrations (``adapters.persistence.migrate``), and rows
have the shapes the service writes (column lists from ``adapters.persistence.sql.columns`` and the
row modules; times as ``TIMESTAMPTZ`` on PostgreSQL, microseconds since the epoch on SQLite).
PostgreSQL loads with ``COPY`` (asyncpg ``copy_records_to_table``), SQLite with ``executemany``
in one transaction per table. Run it on an empty database (ids are fresh; a second run adds
more users, but its emails would collide: refused by the unique index).

What it writes:

- ``--users`` users with one precomputed bcrypt hash of ``correct horse battery`` (cost
  ``--bcrypt-rounds``), e-mail ``user<i>@seed.example.com``; ``user0`` is a ``superadmin``, the
  first user of each organization an ``org_admin``, 1 % ``operator``, the rest ``viewer``; spread
  over ``--orgs`` organizations (``default``, ``org-00001`` ...) with 5 groups each (60 % of users
  in one group, 10 % in a second); 80 % e-mail verified, 0.2 % disabled; 5 % with MFA (a
  confirmed TOTP row and ten recovery-code hashes: size-faithful, but the sealed secret is
  random bytes no deployment can open, so these users cannot finish an MFA login) and 5 % with a
  passkey (random credential, no authenticator holds it).
- ``--tokens`` refresh-token rows: 50 % live (one per session, each its own session),
  40 % rotated (``rotated_refresh_tokens``, spread over the live sessions), 10 % expired (each in
  a session of its own with no live token: what ``authsvc purge`` removes). Default lifetimes
  (``auth.refresh_token_ttl`` 30 days, ``auth.session_max_age`` 90 days).
- ``--audit-events`` audit rows over the last 90 days, in time order, ids from
  ``domain.audit.new_audit_id``: 60 % ``token.refreshed``, 25 % ``login.succeeded``,
  10 % ``login.failed``, the rest ``session.ended``, ``password.changed``, ``mfa.failed``,
  ``user.registered``.
- ``--clients`` OAuth clients (default: one per organization, at most 1,000), id
  ``client_id(i)`` (``5eed`` and ``i`` in 28 hex digits: client ids are 32 hex characters)
  with the secret ``seed-secret-<i>`` (known on purpose: benchmarks present it; never seed a
  production database).

``--live-tokens-out FILE`` writes ``<email>\\t<refresh token>`` per live token of an enabled
user (the clear token, whose SHA-256 is the stored hash: ``application.sessions.tokens
.hash_refresh_token``). Prints rows per second per table and in all.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import secrets
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

import bcrypt

from adapters.persistence.errors import StorageUnavailable
from adapters.persistence.migrate import (
    apply_postgres_migrations,
    apply_sqlite_migrations,
    validate_schema_name,
)
from adapters.persistence.rows.clients import CLIENTS
from adapters.persistence.rows.passkeys import PASSKEYS
from adapters.persistence.sql import columns as cols
from adapters.persistence.times import to_micros
from application.sessions.tokens import hash_refresh_token
from domain.audit import new_audit_id

PASSWORD = "correct horse battery"
"""The password of every seeded user."""
CHUNK = 50_000
"""Rows generated and written per batch."""
REFRESH_TTL = timedelta(days=30)
SESSION_MAX_AGE = timedelta(days=90)
AUDIT_SPAN = timedelta(days=90)
GROUPS_PER_ORG = 5
_DAY = 86_400.0
_AGENT = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
_AUDIT_MIX = (
    ("token.refreshed", 60),
    ("login.succeeded", 25),
    ("login.failed", 10),
    ("session.ended", 2),
    ("password.changed", 1),
    ("mfa.failed", 1),
    ("user.registered", 1),
)

Row = tuple[Any, ...]
When = Callable[[datetime], Any]


@dataclass
class Plan:
    """What to seed: counts (rows) and the reproducible random source."""

    users: int
    tokens: int
    audit_events: int
    orgs: int
    clients: int
    bcrypt_rounds: int = 12
    rng: random.Random = field(default_factory=lambda: random.Random(35))
    now: datetime = field(default_factory=lambda: datetime.now(UTC))


@dataclass
class _Users:
    """The seeded users' ids, e-mails and organizations (index i = user i)."""

    ids: list[str]
    emails: list[str]
    orgs: list[str]
    enabled: list[int]  # indexes of users not disabled


@dataclass
class _Family:
    """One live session: owner index, times."""

    user: int
    id: str
    created: datetime
    token_created: datetime
    expires: datetime


class Loader:
    """Writes batches of rows into one table (one backend)."""

    when: When

    async def load(self, table: str, columns: str, rows: Iterator[Sequence[Row]]) -> int:
        """Write every batch of ``rows`` (tuples in ``columns`` order) into ``table`` in one
        transaction; returns the number of rows."""
        raise NotImplementedError

    async def users(self) -> int:
        """How many users the database holds already."""
        raise NotImplementedError

    async def finish(self) -> None:
        """Refresh the planner's statistics and close."""


class SqliteLoader(Loader):
    """``executemany`` in one transaction per table; ``synchronous=OFF`` while loading."""

    def __init__(self, path: str) -> None:
        self._conn = sqlite3.connect(path, isolation_level=None)
        self._conn.execute("PRAGMA synchronous=OFF")
        self.when = to_micros

    async def load(self, table: str, columns: str, rows: Iterator[Sequence[Row]]) -> int:
        """See ``Loader.load``; booleans are stored as 0/1 by sqlite3."""
        marks = ", ".join("?" for _ in columns.split(","))
        sql = f"INSERT INTO {table} ({columns}) VALUES ({marks})"
        count = 0
        self._conn.execute("BEGIN")
        try:
            for batch in rows:
                self._conn.executemany(sql, batch)
                count += len(batch)
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        return count

    async def users(self) -> int:
        """See ``Loader.users``."""
        return int(self._conn.execute("SELECT count(*) FROM users").fetchone()[0])

    async def finish(self) -> None:
        """Close (the service's connections see every committed row)."""
        self._conn.close()


class PostgresLoader(Loader):
    """``COPY`` (asyncpg ``copy_records_to_table``) in one transaction per table."""

    def __init__(self, conn: Any, schema: str | None) -> None:
        self._conn = conn
        self._schema = schema
        self._loaded: list[str] = []
        self.when = lambda at: at

    async def load(self, table: str, columns: str, rows: Iterator[Sequence[Row]]) -> int:
        """See ``Loader.load``; ``details`` goes in as JSON text (the ``jsonb`` input)."""
        names = [c.strip() for c in columns.split(",")]
        count = 0
        self._loaded.append(table)
        async with self._conn.transaction():
            for batch in rows:
                await self._conn.copy_records_to_table(
                    table, records=batch, columns=names, schema_name=self._schema
                )
                count += len(batch)
        return count

    async def users(self) -> int:
        """See ``Loader.users``."""
        return int(await self._conn.fetchval("SELECT count(*) FROM users"))

    async def finish(self) -> None:
        """``ANALYZE`` the loaded tables (so the first benchmark sees real plans), then close.
        The tables are named: a bare ``ANALYZE`` would lock every table of the database, other
        schemas' included."""
        if self._loaded:
            await self._conn.execute("ANALYZE " + ", ".join(dict.fromkeys(self._loaded)))
        await self._conn.close()


def _chunks(count: int, make: Callable[[int], Row | None]) -> Iterator[list[Row]]:
    """Batches of up to ``CHUNK`` rows ``make(i)`` for i in 0..count-1 (None skipped)."""
    for start in range(0, count, CHUNK):
        batch = [r for i in range(start, min(count, start + CHUNK)) if (r := make(i)) is not None]
        if batch:
            yield batch


def _ago(plan: Plan, low_days: float, high_days: float) -> datetime:
    return plan.now - timedelta(seconds=plan.rng.uniform(low_days, high_days) * _DAY)


def client_id(i: int) -> str:
    """The id of seeded OAuth client ``i``: 32 lower-case hex characters, as the service's
    own (``application.oauth`` refuses any other form before looking it up)."""
    return f"5eed{i:028x}"


def _org_name(k: int) -> str:
    return "default" if k == 0 else f"org-{k:05d}"


def _role(i: int, plan: Plan) -> str:
    if i == 0:
        return "superadmin"
    if i < plan.orgs:  # user i is the first of organization i (round robin)
        return "org_admin"
    return "operator" if i % 100 == 1 else "viewer"


class Seeder:
    """Generates the rows of a ``Plan`` and hands them to a ``Loader``; keeps timings."""

    def __init__(self, plan: Plan, loader: Loader, out: TextIO) -> None:
        self.plan = plan
        self.loader = loader
        self.out = out
        self.timings: list[tuple[str, int, float]] = []
        self.live_tokens: list[tuple[str, str]] = []

    async def _load(self, table: str, columns: str, rows: Iterator[Sequence[Row]]) -> None:
        start = time.perf_counter()
        count = await self.loader.load(table, columns, rows)
        elapsed = time.perf_counter() - start
        self.timings.append((table, count, elapsed))
        rate = count / elapsed if elapsed > 0 else 0.0
        print(f"{table:<24} {count:>12,} rows {elapsed:>9.1f} s {rate:>12,.0f} rows/s",
              file=self.out, flush=True)  # fmt: skip

    async def run(self, want_live: bool) -> None:
        """Seed everything, in foreign-key order (refresh tokens before their sessions, so the
        insert trigger that touches ``sessions.last_used_at`` finds nothing to update: the
        sessions are written with their final ``last_used_at``)."""
        users = await self._users()
        await self._groups(users)
        await self._mfa_and_passkeys(users)
        await self._tokens(users, want_live)
        await self._audit(users)
        await self._clients()

    async def _users(self) -> _Users:
        p, when = self.plan, self.loader.when
        pw_hash = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(p.bcrypt_rounds)).decode()
        ids = [secrets.token_hex(16) for _ in range(p.users)]
        emails = [f"user{i}@seed.example.com" for i in range(p.users)]
        orgs = [_org_name(i % p.orgs) for i in range(p.users)]
        disabled = {i for i in range(1, p.users) if i % 500 == 499}
        mfa = self._mfa_users()

        def user(i: int) -> Row:
            return (ids[i], emails[i], pw_hash, _role(i, p), orgs[i], when(_ago(p, 90, 720)),
                    i in disabled, i % 5 != 4, i in mfa)  # fmt: skip

        await self._load("users", cols.USERS, _chunks(p.users, user))
        enabled = [i for i in range(p.users) if i not in disabled]
        return _Users(ids, emails, orgs, enabled)

    def _mfa_users(self) -> set[int]:
        return {i for i in range(1, self.plan.users) if i % 20 == 7}

    async def _groups(self, users: _Users) -> None:
        p, when = self.plan, self.loader.when
        group_ids = [[secrets.token_hex(16) for _ in range(GROUPS_PER_ORG)] for _ in range(p.orgs)]

        def group(n: int) -> Row:
            k, g = divmod(n, GROUPS_PER_ORG)
            return (group_ids[k][g], f"group-{g}", _org_name(k), when(_ago(p, 300, 720)))

        await self._load(
            "groups", "id, name, org_id, created_at", _chunks(p.orgs * GROUPS_PER_ORG, group)
        )

        def memberships() -> Iterator[list[Row]]:
            batch: list[Row] = []
            for i in range(p.users):
                if i % 10 >= 6:
                    continue
                mine = group_ids[i % p.orgs]
                first = i % GROUPS_PER_ORG
                picks = [first] if i % 10 else [first, (first + 1) % GROUPS_PER_ORG]
                batch.extend((mine[g], users.ids[i], when(_ago(p, 1, 300))) for g in picks)
                if len(batch) >= CHUNK:
                    yield batch
                    batch = []
            if batch:
                yield batch

        await self._load("group_members", "group_id, user_id, created_at", memberships())

    async def _mfa_and_passkeys(self, users: _Users) -> None:
        p, when = self.plan, self.loader.when
        mfa = sorted(self._mfa_users())

        def totp(n: int) -> Row:
            # nonce (12) + sealed 20-byte secret (20) + tag (16), as AesGcmSealer writes it
            return (users.ids[mfa[n]], os.urandom(48), True, None, when(_ago(p, 1, 300)))

        await self._load("mfa_totp", cols.MFA_TOTP, _chunks(len(mfa), totp))

        def codes() -> Iterator[list[Row]]:
            for start in range(0, len(mfa), CHUNK // 10):
                yield [(users.ids[i], secrets.token_hex(32))
                       for i in mfa[start:start + CHUNK // 10] for _ in range(10)]  # fmt: skip

        await self._load("mfa_recovery_codes", "user_id, code_hash", codes())
        owners = [i for i in range(p.users) if i % 20 == 3]
        await self._load(
            "webauthn_user_handles",
            "user_id, handle",
            _chunks(len(owners), lambda n: (users.ids[owners[n]], os.urandom(32))),
        )

        def passkey(n: int) -> Row:
            created = _ago(p, 1, 300)
            return (secrets.token_hex(16), users.ids[owners[n]], os.urandom(32),
                    os.urandom(77), 0, "00000000-0000-0000-0000-000000000000", True, True,
                    "internal hybrid", "Seeded passkey", when(created), None,
                    False)  # fmt: skip

        await self._load("passkeys", PASSKEYS, _chunks(len(owners), passkey))

    async def _tokens(self, users: _Users, want_live: bool) -> list[_Family]:
        p, when, rng = self.plan, self.loader.when, self.plan.rng
        live = p.tokens // 2
        expired = p.tokens // 10
        rotated = p.tokens - live - expired
        pool = users.enabled or list(range(p.users))
        families: list[_Family] = []
        for _ in range(live):
            created = _ago(p, 0, 60)
            age_days = (p.now - created).total_seconds() / _DAY
            token_created = _ago(p, 0, min(age_days, 29.0))
            sess_end = created + SESSION_MAX_AGE
            expires = min(token_created + REFRESH_TTL, sess_end)
            owner = rng.choice(pool)
            families.append(_Family(owner, secrets.token_hex(16), created, token_created, expires))
        dead: list[tuple[int, str, datetime, datetime]] = []  # user, family, created, last use
        for _ in range(expired):
            last = _ago(p, 31, 80)
            dead.append((rng.choice(pool), secrets.token_hex(16), last - timedelta(days=5), last))
        out = self.live_tokens if want_live else None

        def live_row(n: int) -> Row:
            f = families[n]
            clear = secrets.token_urlsafe(32)
            if out is not None:
                out.append((users.emails[f.user], clear))
            return (hash_refresh_token(clear), users.ids[f.user], f.id, when(f.expires),
                    when(f.created + SESSION_MAX_AGE), when(f.token_created))  # fmt: skip

        def expired_row(n: int) -> Row:
            u, fid, created, last = dead[n]
            return (secrets.token_hex(32), users.ids[u], fid, when(last + REFRESH_TTL),
                    when(created + SESSION_MAX_AGE), when(last))  # fmt: skip

        def token_rows() -> Iterator[list[Row]]:
            yield from _chunks(live, live_row)
            yield from _chunks(expired, expired_row)

        await self._load("refresh_tokens", cols.TOKENS, token_rows())

        def rotated_row(n: int) -> Row:
            f = families[n % live] if live else None
            if f is None:  # no live session to hang history on: an expired one
                u, fid, created, last = dead[n % len(dead)]
                f = _Family(u, fid, created, last, last + REFRESH_TTL)
            span = max((f.token_created - f.created).total_seconds(), 1.0)
            made = f.created + timedelta(seconds=rng.uniform(0, span))
            sess_end = f.created + SESSION_MAX_AGE
            return (secrets.token_hex(32), users.ids[f.user], f.id,
                    when(min(made + REFRESH_TTL, sess_end)), when(sess_end), when(made),
                    when(made + timedelta(seconds=rng.uniform(60, 900))))  # fmt: skip

        await self._load(
            "rotated_refresh_tokens",
            cols.ROTATED,
            _chunks(rotated if (live or expired) else 0, rotated_row),
        )

        def session_rows() -> Iterator[list[Row]]:
            def live_session(n: int) -> Row:
                f = families[n]
                return (f.id, users.ids[f.user], when(f.created), when(f.token_created),
                        when(f.created + SESSION_MAX_AGE), _AGENT,
                        f"198.51.100.{n % 250 + 1}", None, None)  # fmt: skip

            def dead_session(n: int) -> Row:
                u, fid, created, last = dead[n]
                return (fid, users.ids[u], when(created), when(last),
                        when(created + SESSION_MAX_AGE), _AGENT, "198.51.100.7", None,
                        None)  # fmt: skip

            yield from _chunks(live, live_session)
            yield from _chunks(expired, dead_session)

        await self._load("sessions", cols.SESSIONS, session_rows())
        return families

    async def _audit(self, users: _Users) -> None:
        p, when, rng = self.plan, self.loader.when, self.plan.rng
        k = p.audit_events
        types = [t for t, _ in _AUDIT_MIX]
        weights = [w for _, w in _AUDIT_MIX]
        start = p.now - AUDIT_SPAN
        step = AUDIT_SPAN / max(k, 1)

        def event(n: int) -> Row:
            at = start + step * n
            kind = rng.choices(types, weights)[0]
            u = rng.randrange(p.users) if p.users else None
            user_id = None if u is None else users.ids[u]
            org_id = None if u is None else users.orgs[u]
            details: dict[str, Any] = {}
            actor: str | None = user_id
            if kind in ("token.refreshed", "session.ended"):
                details["session_id"] = secrets.token_hex(16)
                if kind == "session.ended":
                    details["reason"] = "logout"
            elif kind == "login.succeeded":
                details = {"session_id": secrets.token_hex(16), "method": "password"}
            elif kind in ("login.failed", "mfa.failed"):
                actor = None
                details = {"reason": "invalid_credentials"} if kind == "login.failed" else {}
                if kind == "login.failed":
                    details["method"] = "password"
                else:
                    details["reason"] = "invalid_code"
            elif kind == "password.changed":
                details = {"sessions_ended": 1}
            return (new_audit_id(at), kind, when(at), actor, user_id, org_id,
                    f"203.0.113.{n % 250 + 1}", _AGENT,
                    json.dumps(details, separators=(",", ":")))  # fmt: skip

        await self._load("audit_events", cols.AUDIT_EVENTS, _chunks(k, event))

    async def _clients(self) -> None:
        p, when = self.plan, self.loader.when
        audience = json.dumps(["authsvc"], separators=(",", ":"))
        _GRANTS = json.dumps(["client_credentials"], separators=(",", ":"))

        def client(i: int) -> Row:
            secret_hash = hash_refresh_token(f"seed-secret-{i}")
            return (client_id(i), f"Seeded client {i}", _org_name(i % p.orgs),
                    "read write", audience, False, False, when(_ago(p, 1, 300)), secret_hash,
                    None, None, None, None, _GRANTS, "[]", "[]", False, "client_secret_basic",
                    False, None, None, None, None, False, False, None, None, None,
                    False)  # fmt: skip

        await self._load("oauth_clients", CLIENTS, _chunks(p.clients, client))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.seed", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument("--backend", choices=("sqlite", "postgres"), required=True)
    parser.add_argument("--db", help="SQLite database file (--backend sqlite)")
    parser.add_argument("--dsn", help="postgresql:// DSN (--backend postgres)")
    parser.add_argument("--schema", help="PostgreSQL schema (created if missing)")
    parser.add_argument("--users", type=int, required=True, help="users to create (>= 1)")
    parser.add_argument("--tokens", type=int, default=0, help="refresh-token rows (>= 0)")
    parser.add_argument("--audit-events", type=int, default=0, help="audit rows (>= 0)")
    parser.add_argument("--orgs", type=int, help="organizations (default ceil(users/1000), >= 2)")
    parser.add_argument("--clients", type=int, help="OAuth clients (default: one per org)")
    parser.add_argument("--bcrypt-rounds", type=int, default=12, help="cost of the one hash")
    parser.add_argument("--live-tokens-out", type=Path, help="write '<email>\\t<token>' lines")
    return parser


def _plan(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Plan:
    """Check the arguments (``parser.error`` names the flag, exit status 2)."""
    if args.backend == "sqlite" and not args.db:
        parser.error("--backend sqlite needs --db FILE")
    if args.backend == "postgres" and not args.dsn:
        parser.error("--backend postgres needs --dsn DSN")
    if args.backend == "sqlite" and (args.dsn or args.schema):
        parser.error("--dsn/--schema are for --backend postgres")
    if args.backend == "postgres" and args.db:
        parser.error("--db is for --backend sqlite")
    if args.schema is not None:
        try:
            validate_schema_name(args.schema)
        except ValueError as exc:
            parser.error(f"--schema: {exc}")
    for flag in ("tokens", "audit_events"):
        if getattr(args, flag) < 0:
            parser.error(f"--{flag.replace('_', '-')} must be >= 0")
    if args.users < 1:
        parser.error("--users must be >= 1")
    if not 4 <= args.bcrypt_rounds <= 31:
        parser.error("--bcrypt-rounds must be 4..31")
    orgs = args.orgs if args.orgs is not None else max(2, math.ceil(args.users / 1000))
    if orgs < 1:
        parser.error("--orgs must be >= 1")
    clients = args.clients if args.clients is not None else min(orgs, 1000)
    if clients < 0:
        parser.error("--clients must be >= 0")
    return Plan(args.users, args.tokens, args.audit_events, min(orgs, args.users), clients,
                args.bcrypt_rounds)  # fmt: skip


class _Refused(Exception):
    """The target cannot be seeded (message for the user)."""


async def _seed(args: argparse.Namespace, plan: Plan) -> Seeder:
    loader: Loader
    if args.backend == "sqlite":
        await asyncio.to_thread(apply_sqlite_migrations, args.db)
        loader = SqliteLoader(str(Path(args.db).expanduser()))
    else:
        import asyncpg

        await asyncio.to_thread(apply_postgres_migrations, args.dsn, args.schema)
        settings = {"search_path": args.schema} if args.schema else None
        loader = PostgresLoader(
            await asyncpg.connect(args.dsn, server_settings=settings), args.schema
        )
    seeder = Seeder(plan, loader, sys.stdout)
    try:
        if existing := await loader.users():
            raise _Refused(
                f"the database already holds {existing:,} users: seed an empty one (a new --db"
                " file or --schema)"
            )
        await seeder.run(want_live=args.live_tokens_out is not None)
    finally:
        await loader.finish()
    return seeder


def main(argv: list[str] | None = None) -> None:
    """Parse ``argv``, migrate, seed, print rows per second; write the live tokens if asked."""
    parser = _parser()
    args = parser.parse_args(argv)
    plan = _plan(args, parser)
    started = time.perf_counter()
    try:
        seeder = asyncio.run(_seed(args, plan))
    except _Refused as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    except StorageUnavailable as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    elapsed = time.perf_counter() - started
    total = sum(count for _, count, _ in seeder.timings)
    print(f"{'total':<24} {total:>12,} rows {elapsed:>9.1f} s {total / elapsed:>12,.0f} rows/s"
          " (with migrations and ANALYZE)")  # fmt: skip
    print(f"superadmin: user0@seed.example.com, password {PASSWORD!r}")
    if args.live_tokens_out is not None:
        with open(args.live_tokens_out, "w", encoding="utf-8") as fh:
            fh.writelines(f"{email}\t{token}\n" for email, token in seeder.live_tokens)
        os.chmod(args.live_tokens_out, 0o600)
        print(f"{len(seeder.live_tokens):,} live refresh tokens in {args.live_tokens_out}")


if __name__ == "__main__":
    main()
