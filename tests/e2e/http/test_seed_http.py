"""``python -m bench.seed`` (issue #35) on SQLite and PostgreSQL: the seeded database serves the
real app — a seeded user logs in with the shared password, a token from ``--live-tokens-out``
refreshes, a seeded superadmin pages through every user and reads the seeded audit rows — and
bad arguments are refused naming the flag."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from tests.e2e.helpers import ONE_PER_BACKEND, PASSWORD, MakeClient, bearer
from tests.e2e.servers import ROOT

USERS, TOKENS, AUDIT = 200, 1_000, 1_000
SEEDED_ADDRESS = "203.0.113."  # the seeded audit rows' client addresses


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend."""
    return request.param  # type: ignore[no-any-return]


def _seed(storage_env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    if storage_env["AUTHSVC_STORAGE__BACKEND"] == "sqlite":
        target = ["--backend", "sqlite", "--db", storage_env["AUTHSVC_STORAGE__SQLITE_PATH"]]
    else:
        target = ["--backend", "postgres", "--dsn", storage_env["AUTHSVC_STORAGE__POSTGRES_DSN"],
                  "--schema", storage_env["AUTHSVC_STORAGE__POSTGRES_SCHEMA"]]  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "bench.seed", *target, *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


async def _login(client: TestClient, email: str) -> dict[str, Any]:
    resp = await client.post("/login", json={"email": email, "password": PASSWORD})
    assert resp.status == 200, await resp.text()
    return await resp.json()  # type: ignore[no-any-return]


async def _walk(client: TestClient, path: str, token: str) -> list[dict[str, Any]]:
    """Every item of a keyset-paginated listing, 50 per page."""
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        params = {"limit": "50", **({"cursor": cursor} if cursor else {})}
        resp = await client.get(path, params=params, headers=bearer(token))
        assert resp.status == 200, await resp.text()
        body = await resp.json()
        items.extend(body["items"])
        cursor = body["next_cursor"]
        if not cursor:
            return items


async def test_a_seeded_database_serves_the_app(
    storage_env: dict[str, str], make_client: MakeClient, tmp_path: Path
) -> None:
    live = tmp_path / "live.txt"
    done = _seed(storage_env, "--users", str(USERS), "--tokens", str(TOKENS), "--audit-events",
                 str(AUDIT), "--bcrypt-rounds", "4", "--live-tokens-out", str(live))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "rows/s" in done.stdout and "refresh_tokens" in done.stdout
    lines = live.read_text().splitlines()
    assert len(lines) == TOKENS // 2  # half the token rows are live, all of enabled users
    client = await make_client()

    await _login(client, "user5@seed.example.com")  # a viewer without MFA
    email, token = lines[0].split("\t")
    resp = await client.post("/refresh", json={"refresh_token": token})
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["refresh_token"] != token
    me = await client.get("/me", headers=bearer((await resp.json())["access_token"]))
    assert (await me.json())["email"] == email

    admin = (await _login(client, "user0@seed.example.com"))["access_token"]
    users = await _walk(client, "/users", admin)
    assert sorted(u["email"] for u in users) == sorted(
        f"user{i}@seed.example.com" for i in range(USERS)
    )
    assert len({u["org_id"] for u in users}) == 2
    assert sum(u["mfa_enabled"] for u in users) == 10 and sum(u["passkeys"] for u in users) == 10

    events = await _walk(client, "/audit-events", admin)
    seeded = [e for e in events if (e["client_address"] or "").startswith(SEEDED_ADDRESS)]
    assert len(seeded) == AUDIT
    assert {"token.refreshed", "login.succeeded", "login.failed"} <= {e["type"] for e in seeded}
    resp = await client.get(
        "/audit-events", params={"type": "login.failed", "limit": "10"}, headers=bearer(admin)
    )
    assert resp.status == 200
    assert {e["type"] for e in (await resp.json())["items"]} == {"login.failed"}


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--backend", "sqlite", "--users", "1"], "--db"),
        (["--backend", "postgres", "--users", "1"], "--dsn"),
        (["--backend", "sqlite", "--db", "x.db", "--users", "0"], "--users"),
        (["--backend", "sqlite", "--db", "x.db", "--users", "1", "--tokens", "-1"], "--tokens"),
        (["--backend", "postgres", "--dsn", "postgresql://h/d", "--schema", "A;", "--users", "1"],
         "--schema"),
    ],
)  # fmt: skip
def test_bad_arguments_are_refused_naming_the_flag(args: list[str], named: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.seed", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert named in done.stderr


def test_a_database_that_holds_users_is_refused(tmp_path: Path) -> None:
    db = str(tmp_path / "seeded.db")
    args = ["--backend", "sqlite", "--db", db, "--users", "3", "--bcrypt-rounds", "4"]
    first = subprocess.run(
        [sys.executable, "-m", "bench.seed", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    again = subprocess.run(
        [sys.executable, "-m", "bench.seed", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert again.returncode == 2
    assert "already holds 3 users" in again.stderr and "Traceback" not in again.stderr


def test_an_unreachable_postgres_is_refused_naming_the_dsn() -> None:
    args = ["--backend", "postgres", "--dsn", "postgresql://nobody@127.0.0.1:9/none",
            "--users", "1"]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "bench.seed", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "storage.postgres_dsn" in done.stderr and "Traceback" not in done.stderr
