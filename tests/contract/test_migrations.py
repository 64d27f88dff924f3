"""Migrations (yoyo): idempotent, safe when started concurrently, and clear when storage is
unreachable. Covers SQLite always and PostgreSQL when ``AUTHSVC_TEST_POSTGRES_DSN`` is set."""

from __future__ import annotations

import multiprocessing
import stat
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest

from adapters.persistence.errors import StorageUnavailable, redact_dsn
from adapters.persistence.migrate import apply_postgres_migrations, apply_sqlite_migrations
from adapters.persistence.postgres import PostgresStorage
from adapters.persistence.sqlite import SqliteStorage

ALL = [
    "0001_initial",
    "0003_signing_keys",
    "0004_sessions",
    "0005_email_tokens",
    "0006_mfa",
    "0007_audit",
    "0008_oauth_clients",
    "0009_passkeys",
    "0012_scale_indexes",
    "0013_client_signing_alg",
    "0015_oidc",
    "0016_federated_identities",
    "0017_client_all_organizations",
    "0018_federation_hardening",
    "0019_email_change",
    "0021_invitations",
    "0022_device_grants",
    "0024_outbox",
    "0026_webhooks",
    "0027_scim_attributes",
    "0028_webhook_delivery_retention",
]
EXPECTED_TABLES = {
    "webhooks",
    "webhook_deliveries",
    "users",
    "refresh_tokens",
    "rotated_refresh_tokens",
    "groups",
    "group_members",
    "login_failures",
    "signing_keys",
    "sessions",
    "audit_events",
    "oauth_clients",
    "revoked_access_tokens",
    "dpop_proofs",
    "passkeys",
    "webauthn_user_handles",
    "webauthn_ceremonies",
    "oidc_codes",
    "oidc_consents",
    "oidc_hosted_sessions",
    "federated_identities",
    "federation_flows",
    "federation_nonces",
    "invitations",
    "oidc_device_grants",
    "oidc_pushed_requests",
    "outbox",
}
RUNNERS = 4


def _run_concurrently(
    executor: Executor, fn: Callable[..., list[str]], *args: object
) -> list[list[str]]:
    with executor:
        futures = [executor.submit(fn, *args) for _ in range(RUNNERS)]
        return [f.result(timeout=90) for f in futures]


def _processes() -> Executor:
    return ProcessPoolExecutor(RUNNERS, mp_context=multiprocessing.get_context("spawn"))


def _sqlite_tables(path: Path) -> set[str]:
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    finally:
        conn.close()
    return {r[0] for r in rows}


def _pg_tables(dsn: str, schema: str) -> set[str]:
    import psycopg

    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema,)
        ).fetchall()
    return {r[0] for r in rows}


# --- SQLite ---------------------------------------------------------------------------------


def test_sqlite_migrations_apply_once_then_do_nothing(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "a" / "b.db"
    assert apply_sqlite_migrations(str(db)) == ALL
    assert apply_sqlite_migrations(str(db)) == []
    assert EXPECTED_TABLES <= _sqlite_tables(db)
    # Nothing on stdout: yoyo's result tables (0015's ALTER TABLE … ADD COLUMN … CHECK has
    # result columns under SQLite) would end up in a command's output.
    assert capfd.readouterr().out == ""


def test_sqlite_file_and_folder_are_private_and_in_wal_mode(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "private" / "authsvc.db"
    apply_sqlite_migrations(str(db))
    assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_sqlite_path_expands_the_home_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert apply_sqlite_migrations("~/.authsvc/authsvc.db") == ALL
    assert (tmp_path / ".authsvc" / "authsvc.db").is_file()


def test_sqlite_migrations_from_concurrent_threads_apply_exactly_once(tmp_path: Path) -> None:
    db = tmp_path / "threads.db"
    results = _run_concurrently(ThreadPoolExecutor(RUNNERS), apply_sqlite_migrations, str(db))
    assert sorted(i for r in results for i in r) == ALL
    assert EXPECTED_TABLES <= _sqlite_tables(db)


@pytest.mark.slow
def test_sqlite_migrations_from_concurrent_processes_apply_exactly_once(tmp_path: Path) -> None:
    db = tmp_path / "procs.db"
    results = _run_concurrently(_processes(), apply_sqlite_migrations, str(db))
    assert sorted(i for r in results for i in r) == ALL
    assert EXPECTED_TABLES <= _sqlite_tables(db)


def test_sqlite_unusable_path_raises_storage_unavailable(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StorageUnavailable) as info:
        apply_sqlite_migrations(str(blocker / "authsvc.db"))
    assert "storage.sqlite_path" in str(info.value)


async def test_sqlite_open_applies_migrations(tmp_path: Path) -> None:
    db = tmp_path / "open.db"
    storage = SqliteStorage(str(db))
    await storage.open()
    try:
        await storage.ping()
        assert EXPECTED_TABLES <= _sqlite_tables(db)
    finally:
        await storage.close()
    assert apply_sqlite_migrations(str(db)) == []


# --- PostgreSQL ------------------------------------------------------------------------------


@pytest.mark.postgres
def test_postgres_migrations_apply_once_then_do_nothing(
    dsn: str, fresh_pg_schema: str, capfd: pytest.CaptureFixture[str]
) -> None:
    assert apply_postgres_migrations(dsn, fresh_pg_schema) == ALL
    assert apply_postgres_migrations(dsn, fresh_pg_schema) == []
    assert EXPECTED_TABLES <= _pg_tables(dsn, fresh_pg_schema)
    assert capfd.readouterr().out == ""


@pytest.mark.postgres
def test_postgres_migrations_from_concurrent_threads_apply_exactly_once(
    dsn: str, fresh_pg_schema: str
) -> None:
    results = _run_concurrently(
        ThreadPoolExecutor(RUNNERS), apply_postgres_migrations, dsn, fresh_pg_schema
    )
    assert sorted(i for r in results for i in r) == ALL
    assert EXPECTED_TABLES <= _pg_tables(dsn, fresh_pg_schema)


@pytest.mark.postgres
@pytest.mark.slow
def test_postgres_migrations_from_concurrent_processes_apply_exactly_once(
    dsn: str, fresh_pg_schema: str
) -> None:
    results = _run_concurrently(_processes(), apply_postgres_migrations, dsn, fresh_pg_schema)
    assert sorted(i for r in results for i in r) == ALL
    assert EXPECTED_TABLES <= _pg_tables(dsn, fresh_pg_schema)


@pytest.mark.postgres
async def test_postgres_open_applies_migrations(dsn: str, fresh_pg_schema: str) -> None:
    storage = PostgresStorage(dsn, 1, 2, schema=fresh_pg_schema)
    await storage.open()
    try:
        await storage.ping()
        assert EXPECTED_TABLES <= _pg_tables(dsn, fresh_pg_schema)
    finally:
        await storage.close()


UNREACHABLE = "postgresql://authsvc:s3cret-pw@127.0.0.1:1/authsvc"


def test_unreachable_postgres_raises_storage_unavailable_without_the_password() -> None:
    with pytest.raises(StorageUnavailable) as info:
        apply_postgres_migrations(UNREACHABLE)
    message = str(info.value)
    assert message.startswith("storage.postgres_dsn: ")
    assert "s3cret-pw" not in message
    assert "postgresql://authsvc:***@127.0.0.1:1/authsvc" in message
    assert info.value.reason  # the driver's reason, first line only
    assert "\n" not in message


async def test_postgres_open_on_unreachable_server_raises_storage_unavailable() -> None:
    storage = PostgresStorage(UNREACHABLE, 1, 2)
    with pytest.raises(StorageUnavailable) as info:
        await storage.open()
    assert "storage.postgres_dsn" in str(info.value)
    assert "s3cret-pw" not in str(info.value)


@pytest.mark.parametrize("bad", ["not a dsn", "mysql://u:s3cret-pw@h/db", "postgresql://h:x/db"])
async def test_malformed_postgres_dsn_raises_storage_unavailable(bad: str) -> None:
    with pytest.raises(StorageUnavailable) as info:
        await PostgresStorage(bad, 1, 2).open()
    assert "storage.postgres_dsn" in str(info.value)
    assert "s3cret-pw" not in str(info.value)


@pytest.mark.parametrize(
    ("dsn_in", "shown"),
    [
        ("postgresql://u:pw@h:5432/db", "postgresql://u:***@h:5432/db"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
        ("postgresql://h/db?user=u&password=pw", "postgresql://h/db?user=u&password=***"),
        ("host=h user=u password=pw", "host=h user=u password=***"),
    ],
)
def test_redact_dsn_hides_only_the_password(dsn_in: str, shown: str) -> None:
    assert redact_dsn(dsn_in) == shown


async def test_sqlite_sessions_migration_gives_live_families_a_session_and_keeps_them_working(
    tmp_path: Path,
) -> None:
    """A database from before ``0004_sessions`` with a live refresh-token family: after the
    migration the family is a session (listed, ended with its tokens) and rotation works on."""
    import shutil
    import sqlite3
    from urllib.parse import quote

    from adapters.persistence.migrate import MIGRATIONS_DIR, apply_from
    from adapters.persistence.sqlite import SqliteStorage
    from adapters.persistence.times import to_micros
    from tests.factories import T0

    old = tmp_path / "old-migrations"
    old.mkdir()
    for name in ("0001_initial", "0003_signing_keys"):
        for suffix in (".sql", ".rollback.sql"):
            shutil.copy(MIGRATIONS_DIR / "sqlite" / (name + suffix), old)
    db = tmp_path / "authsvc.db"
    assert apply_from("sqlite:///" + quote(str(db)), old) == ["0001_initial", "0003_signing_keys"]
    t0, day = to_micros(T0), 86_400_000_000
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT INTO users VALUES ('u1', 'a@example.com', 'h', 'viewer', 'org', ?)", (t0,)
        )
        conn.execute(
            "INSERT INTO refresh_tokens VALUES ('h1', 'u1', 'fam', ?, ?, ?)",
            (t0 + day, t0 + 90 * day, t0),
        )
    assert apply_sqlite_migrations(str(db)) == ALL[2:]  # 0004_sessions and later
    storage = SqliteStorage(str(db))
    await storage.open()
    try:
        async with storage.begin() as uow:
            [session] = await uow.sessions.list_live("u1", T0)
            assert (session.id, session.created_at, session.user_agent) == ("fam", T0, None)
            user = await uow.users.get("u1")
            assert user is not None and not user.disabled and not user.email_verified
            assert await uow.sessions.end("fam") == 1
    finally:
        await storage.close()
