"""Versioned schema migrations with yoyo-migrations (synchronous; call via ``asyncio.to_thread``).

The SQL files live in ``migrations/sqlite/`` and ``migrations/postgres/`` next to this module
(``0001_initial.sql`` ...; later ones declare ``-- depends: <id>``). Applying is idempotent: yoyo
records applied ids in ``_yoyo_migration``.

Concurrent starts are safe. yoyo's own lock is a row in ``yoyo_lock``, but creating that table and
its probe of transactional DDL race on a fresh database, so each function first takes a lock of
its own for the whole run: an exclusive ``flock`` on ``<db>.migrate-lock`` for SQLite (across
processes and threads), ``pg_advisory_lock`` keyed by the schema on a dedicated connection for
PostgreSQL.

yoyo prints the result table of any migration statement that has result columns on
``sys.stdout`` (SQLite's ``ALTER TABLE … ADD COLUMN`` with a ``NOT NULL`` or ``CHECK``
constraint has one); that table goes to this module's log at DEBUG instead, so that a command's
output (``authsvc clients create`` on a fresh database) is its own.
"""

from __future__ import annotations

import fcntl
import io
import logging
import os
import re
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from adapters.persistence.errors import StorageUnavailable, redact_dsn, safe_reason

__all__ = [
    "MIGRATIONS_DIR",
    "apply_postgres_migrations",
    "apply_sqlite_migrations",
    "prepare_sqlite_path",
    "validate_schema_name",
]

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
"""Folder holding one sub-folder of SQL migrations per backend."""

_PG_LOCK_CLASS = 0x6D696772  # "migr": the advisory-lock class of migration runs, keyed by schema
_SCHEMA_RE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_LOCK_TIMEOUT_S = 60
_STDOUT = threading.Lock()
"""Held while yoyo's stdout is redirected: ``redirect_stdout`` swaps the process-wide
``sys.stdout``, and two overlapping swaps in two threads would leave the wrong one behind."""
log = logging.getLogger(__name__)


def prepare_sqlite_path(path: str) -> Path:
    """Expand ``~`` in ``path``, create the parent folder (mode 0700) if missing, return it.

    Raises ``StorageUnavailable`` (naming ``storage.sqlite_path``) if the folder cannot be made.
    """
    db = Path(path).expanduser()
    try:
        db.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageUnavailable("storage.sqlite_path", str(exc), str(db)) from None
    return db


@contextmanager
def _file_lock(lock_path: Path) -> Iterator[None]:
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def apply_from(uri: str, source: Path) -> list[str]:
    """Apply the pending migrations of the folder ``source`` to the database at ``uri`` (a
    yoyo URI) and return the ids applied, in order; nothing is printed (yoyo's result tables
    go to the log at DEBUG). Raises yoyo's and the driver's errors."""
    from yoyo import get_backend, read_migrations

    backend = get_backend(uri)
    try:
        migrations = read_migrations(str(source))
        with backend.lock(timeout=_LOCK_TIMEOUT_S):
            pending = backend.to_apply(migrations)
            printed = io.StringIO()
            with _STDOUT, redirect_stdout(printed):
                backend.apply_migrations(pending)
        if printed.getvalue():
            log.debug("migration output:\n%s", printed.getvalue())
        return [m.id for m in pending]
    finally:
        backend.connection.close()


def apply_sqlite_migrations(path: str) -> list[str]:
    """Apply pending SQLite migrations to the database file ``path`` (``~`` expanded).

    Creates the file (and its folder, mode 0700) if needed and switches it to WAL mode.
    Returns the ids applied by this call, oldest first (empty when up to date).
    Raises ``StorageUnavailable`` naming ``storage.sqlite_path`` if the file cannot be used.
    """
    from yoyo.exceptions import LockTimeout

    db = prepare_sqlite_path(path)
    try:
        with _file_lock(db.with_name(db.name + ".migrate-lock")):
            if not db.exists():
                # The file holds password hashes: owner-only. SQLite gives -wal/-shm the same mode.
                os.close(os.open(db, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
            conn = sqlite3.connect(db, timeout=30)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
            finally:
                conn.close()
            return apply_from("sqlite:///" + quote(str(db.resolve())), MIGRATIONS_DIR / "sqlite")
    except (OSError, sqlite3.Error, LockTimeout) as exc:
        raise StorageUnavailable("storage.sqlite_path", safe_reason(exc), str(db)) from None


def validate_schema_name(schema: str) -> str:
    """Return ``schema`` if it is a plain lower-case identifier; raise ``ValueError`` otherwise."""
    if not _SCHEMA_RE.match(schema):
        raise ValueError(f"invalid schema name {schema!r}: use [a-z_][a-z0-9_]*")
    return schema


def _yoyo_uri(dsn: str, schema: str | None) -> str:
    parts = urlsplit(dsn)
    if parts.scheme not in ("postgres", "postgresql"):
        raise ValueError("must be a postgresql:// URI")
    args = dict(parse_qsl(parts.query))
    args.setdefault("connect_timeout", "10")
    if schema is not None:
        args["schema"] = schema
    return urlunsplit(("postgresql+psycopg", parts.netloc, parts.path, urlencode(args), ""))


def apply_postgres_migrations(dsn: str, schema: str | None = None) -> list[str]:
    """Apply pending PostgreSQL migrations to the database at ``dsn`` (a ``postgresql://`` URI).

    With ``schema``, the schema is created if missing and both the tables and yoyo's bookkeeping
    live in it. Returns the ids applied by this call, oldest first (empty when up to date).
    Raises ``StorageUnavailable`` naming ``storage.postgres_dsn`` (password redacted) when the
    DSN is malformed, the server cannot be reached, or a migration fails (e.g. no privilege);
    ``ValueError`` for a bad ``schema`` name.
    """
    import psycopg
    from psycopg import sql
    from yoyo.connections import BadConnectionURI
    from yoyo.exceptions import LockTimeout

    if schema is not None:
        validate_schema_name(schema)
    where = redact_dsn(dsn)
    try:
        uri = _yoyo_uri(dsn, schema)
        with psycopg.connect(dsn, autocommit=True, connect_timeout=10) as lock_conn:
            # One lock per schema: runs on the same schema wait for each other, runs on other
            # schemas of the database (other deployments, other tests) go on.
            lock = (_PG_LOCK_CLASS, schema or "")
            lock_conn.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", lock)
            try:
                if schema is not None:
                    lock_conn.execute(
                        sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema))
                    )
                return apply_from(uri, MIGRATIONS_DIR / "postgres")
            finally:
                lock_conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", lock)
    except (ValueError, BadConnectionURI, LockTimeout, psycopg.Error) as exc:
        raise StorageUnavailable("storage.postgres_dsn", safe_reason(exc, dsn), where) from None
