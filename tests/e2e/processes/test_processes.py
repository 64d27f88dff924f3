"""Several service processes sharing one database, and processes killed mid-request
(issue "PostgreSQL storage", parts 4 and 5), on SQLite and on Postgres."""

from __future__ import annotations

import asyncio
import hashlib
import random
import sqlite3
from pathlib import Path
from typing import Any

import aiohttp
import bcrypt
import pytest

from tests.e2e.servers import Server, each_backend, server_env  # noqa: F401 - each_backend overrides the e2e fixture
from tests.soak import KILL_ROUNDS

pytestmark = pytest.mark.slow

PASSWORD = "correct horse battery"
NEW_PASSWORD = "a brand new secret"


class Database:
    """Read-only look at the stored rows, independent of the service's adapters."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env

    def rows(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        if self.env["AUTHSVC_STORAGE__BACKEND"] == "sqlite":
            with sqlite3.connect(self.env["AUTHSVC_STORAGE__SQLITE_PATH"]) as conn:
                return conn.execute(sql, params).fetchall()
        import psycopg

        with psycopg.connect(self.env["AUTHSVC_STORAGE__POSTGRES_DSN"]) as conn:
            conn.execute(f'SET search_path TO "{self.env["AUTHSVC_STORAGE__POSTGRES_SCHEMA"]}"')
            return conn.execute(sql.replace("?", "%s"), params).fetchall()

    def live_hashes(self, user_id: str) -> set[str]:
        return {r[0] for r in self.rows("SELECT token_hash FROM refresh_tokens WHERE user_id = ?",
                                        user_id)}  # fmt: skip

    def rotated(self, token_hash: str) -> bool:
        sql = "SELECT 1 FROM rotated_refresh_tokens WHERE token_hash = ?"
        return bool(self.rows(sql, token_hash))

    def password_hash(self, user_id: str) -> str:
        return str(self.rows("SELECT password_hash FROM users WHERE id = ?", user_id)[0][0])


@pytest.fixture
def env(tmp_path: Path, storage_env: dict[str, str]) -> dict[str, str]:
    """The servers' environment: the e2e storage (SQLite file or a fresh Postgres schema)."""
    return server_env(tmp_path, storage_env, AUTHSVC_AUTH__LOGIN_MAX_FAILURES="1000")


async def _post(session: aiohttp.ClientSession, url: str, body: dict[str, Any],
                token: str | None = None) -> tuple[int, Any]:  # fmt: skip
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with session.post(url, json=body, headers=headers) as resp:
        return resp.status, await resp.json() if resp.status != 204 else None


async def setup_user(session: aiohttp.ClientSession, base: str) -> str:
    status, user = await _post(session, base + "/register",
                               {"email": "alice@example.com", "password": PASSWORD})  # fmt: skip
    assert status == 201
    return str(user["id"])


async def login(session: aiohttp.ClientSession, base: str, password: str = PASSWORD) -> Any:
    status, pair = await _post(session, base + "/login",
                               {"email": "alice@example.com", "password": password})  # fmt: skip
    assert status == 200, pair
    return pair


async def test_two_processes_never_both_rotate_one_token(env: dict[str, str]) -> None:
    first, second = Server(env), Server(env)
    try:
        async with aiohttp.ClientSession() as session:
            await setup_user(session, first.base)
            pairs = [await login(session, first.base) for _ in range(10)]
            for pair in pairs:
                body = {"refresh_token": pair["refresh_token"]}
                results = await asyncio.gather(
                    *(_post(session, server.base + "/refresh", body)
                      for server in (first, second) for _ in range(5))
                )  # fmt: skip
                statuses = sorted(status for status, _ in results)
                assert statuses == [200] + [401] * 9, statuses
    finally:
        first.stop()
        second.stop()


async def test_sigkill_during_refresh_leaves_old_token_xor_new_pair(env: dict[str, str]) -> None:
    db = Database(env)
    rng = random.Random(7)
    server = Server(env)
    async with aiohttp.ClientSession() as session:
        user_id = await setup_user(session, server.base)
        for _ in range(KILL_ROUNDS):
            pair = await login(session, server.base)
            old_hash = hashlib.sha256(pair["refresh_token"].encode()).hexdigest()
            before = db.live_hashes(user_id)
            request = asyncio.ensure_future(
                _post(session, server.base + "/refresh", {"refresh_token": pair["refresh_token"]})
            )
            await asyncio.sleep(rng.uniform(0, 0.01))
            await asyncio.to_thread(server.kill)
            outcome = await asyncio.gather(request, return_exceptions=True)
            after = db.live_hashes(user_id)
            old_alive = old_hash in after
            new_tokens = after - before
            if old_alive:  # the refresh did not happen: nothing else changed
                assert new_tokens == set() and not db.rotated(old_hash), outcome
            else:  # it happened whole: exactly one new live token, the old one remembered
                assert len(new_tokens) == 1 and db.rotated(old_hash), outcome
            assert after - new_tokens == before - ({old_hash} if not old_alive else set())
            server = Server(env)  # restart on the same database
            status, _ = await _post(session, server.base + "/refresh",
                                    {"refresh_token": pair["refresh_token"]})  # fmt: skip
            assert status == (200 if old_alive else 401)
    server.stop()


async def test_sigkill_during_password_change_is_all_or_nothing(env: dict[str, str]) -> None:
    db = Database(env)
    rng = random.Random(11)
    server = Server(env)
    passwords = [PASSWORD, NEW_PASSWORD]
    async with aiohttp.ClientSession() as session:
        user_id = await setup_user(session, server.base)
        for _ in range(KILL_ROUNDS):
            current = next(p for p in passwords
                           if bcrypt.checkpw(p.encode(), db.password_hash(user_id).encode()))  # fmt: skip
            other = passwords[1 - passwords.index(current)]
            pairs = [await login(session, server.base, current) for _ in range(3)]
            live_before = db.live_hashes(user_id)
            assert len(live_before) >= 3
            request = asyncio.ensure_future(
                _post(session, server.base + "/me/password",
                      {"old_password": current, "new_password": other}, pairs[0]["access_token"])
            )  # fmt: skip
            await asyncio.sleep(rng.uniform(0, 0.02))
            await asyncio.to_thread(server.kill)
            await asyncio.gather(request, return_exceptions=True)
            stored = db.password_hash(user_id).encode()
            changed = bcrypt.checkpw(other.encode(), stored)
            assert changed != bcrypt.checkpw(current.encode(), stored)
            if changed:  # new hash and no refresh token left, in one transaction
                assert db.live_hashes(user_id) == set()
            else:
                assert db.live_hashes(user_id) == live_before
            server = Server(env)
    server.stop()
