"""A service process killed during a role change (issue #15, "Done when"): the role and its
audit row commit together or not at all, on SQLite and on Postgres."""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.e2e.processes.test_processes import Database
from tests.e2e.servers import ROOT, Server, each_backend, server_env  # noqa: F401 - each_backend overrides the e2e fixture
from tests.soak import KILL_ROUNDS

pytestmark = pytest.mark.slow

PASSWORD = "correct horse battery"
ROLES = ("viewer", "operator")


@pytest.fixture
def env(tmp_path: Path, storage_env: dict[str, str]) -> dict[str, str]:
    """The servers' environment: the e2e storage (SQLite file or a fresh Postgres schema)."""
    return server_env(tmp_path, storage_env, AUTHSVC_AUTH__LOGIN_MAX_FAILURES="1000")


def _create_superadmin(env: dict[str, str], email: str) -> None:
    """``authsvc create-superadmin`` in its own process, as an operator would run it."""
    subprocess.run(
        [sys.executable, "-m", "entrypoints.cli", "create-superadmin", "--email", email],
        cwd=ROOT,
        env={**os.environ, **env, "AUTHSVC_BOOTSTRAP_PASSWORD": PASSWORD},
        check=True,
        capture_output=True,
        timeout=60,
    )


async def _call(session: aiohttp.ClientSession, method: str, url: str, body: dict[str, Any],
                token: str | None = None) -> tuple[int, Any]:  # fmt: skip
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with session.request(method, url, json=body, headers=headers) as resp:
        return resp.status, await resp.json()


def _role_rows(db: Database, user_id: str) -> list[dict[str, Any]]:
    """The details of the ``user.role_changed`` rows of ``user_id``, oldest first."""
    rows = db.rows(
        "SELECT details FROM audit_events WHERE type = ? AND user_id = ? ORDER BY id",
        "user.role_changed",
        user_id,
    )
    return [d if isinstance(d, dict) else json.loads(d) for (d,) in rows]


async def test_sigkill_during_a_role_change_keeps_role_and_audit_row_together(
    env: dict[str, str],
) -> None:
    db = Database(env)
    rng = random.Random(13)
    await asyncio.to_thread(_create_superadmin, env, "root@example.com")
    server = Server(env)
    async with aiohttp.ClientSession() as session:
        status, alice = await _call(session, "POST", server.base + "/register",
                                    {"email": "alice@example.com", "password": PASSWORD})  # fmt: skip
        assert status == 201, alice
        committed = 0
        for _ in range(KILL_ROUNDS):
            status, pair = await _call(session, "POST", server.base + "/login",
                                       {"email": "root@example.com", "password": PASSWORD})  # fmt: skip
            assert status == 200, pair
            role_before = db.rows("SELECT role FROM users WHERE id = ?", alice["id"])[0][0]
            target = ROLES[1 - ROLES.index(role_before)]
            request = asyncio.ensure_future(
                _call(session, "PUT", f"{server.base}/users/{alice['id']}/role",
                      {"role": target}, pair["access_token"])
            )  # fmt: skip
            await asyncio.sleep(rng.uniform(0, 0.02))
            await asyncio.to_thread(server.kill)
            await asyncio.gather(request, return_exceptions=True)
            role_after = db.rows("SELECT role FROM users WHERE id = ?", alice["id"])[0][0]
            rows = _role_rows(db, alice["id"])
            if role_after != role_before:  # the change happened, and its row with it
                committed += 1
                assert rows[-1] == {"old_role": role_before, "new_role": role_after}
            assert len(rows) == committed, (role_before, role_after, rows)
            server = Server(env)  # restart on the same database
    server.stop()
