"""Many instances, one service (issue 16; docs/reference/operations.md): three ``authsvc serve``
processes, each with its own HOME and key directory (as three hosts would be), over one
PostgreSQL schema and one event broker (NATS, then Redis).

The keys live in the database (``auth.key_store`` defaults to ``database`` on PostgreSQL),
encrypted under one key-encryption key given to every instance; the three start at once and end
with one key; a token from any instance verifies on all; the JWKS is byte-identical; refresh
rotation and login throttling hold across instances; ``POST /actuator/refresh`` on one reloads
all three; a key rotation announced by ``authsvc keys rotate`` is used by all; killing one
instance loses no session.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.brokers import BROKERS, new_channel, new_kek, require_broker
from tests.e2e.servers import ROOT, Server
from tests.pg import PG_SKIP_REASON, drop_pg_schema, new_schema_name, pg_dsn

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

PASSWORD = "correct horse battery"
ROOT_EMAIL = "root@example.com"


def _write(path: Path, text: str) -> None:
    path.write_text(text)


async def call(
    base: str, method: str, path: str, body: Any = None, token: str | None = None
) -> tuple[int, Any, dict[str, str]]:
    """One request on a fresh connection: (status, JSON body or text, headers)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session,
        session.request(method, base + path, json=body, headers=headers) as resp,
    ):
        text = await resp.text()
        try:
            data: Any = json.loads(text)
        except ValueError:
            data = text
        return resp.status, data, dict(resp.headers)


async def _jwks(base: str) -> bytes:
    async with (
        aiohttp.ClientSession() as session,
        session.get(base + "/.well-known/jwks.json") as resp,
    ):
        assert resp.status == 200
        return await resp.read()


def _kid(token: str) -> str:
    import base64

    head = token.split(".")[0]
    return str(json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))["kid"])


class Cluster:
    """Three instances and what they share: the schema, the config file, the broker."""

    def __init__(self, tmp: Path, backend: str, url: str) -> None:
        dsn = pg_dsn()
        assert dsn is not None
        self.dsn = dsn
        self.schema = new_schema_name("authsvc_multi")
        self.config = tmp / "authsvc.toml"
        _write(self.config, "[auth]\naccess_token_ttl = 900\n")
        self.common = {
            "AUTHSVC_CONFIG": str(self.config),
            "AUTHSVC_AUTH__BCRYPT_ROUNDS": "4",
            "AUTHSVC_AUTH__KEY_ENCRYPTION_KEY": new_kek(),
            "AUTHSVC_AUTH__KEY_PUBLISH_AHEAD": "3",
            "AUTHSVC_STORAGE__BACKEND": "postgres",
            "AUTHSVC_STORAGE__POSTGRES_DSN": dsn,
            "AUTHSVC_STORAGE__POSTGRES_SCHEMA": self.schema,
            "AUTHSVC_EVENTS__BACKEND": backend,
            f"AUTHSVC_EVENTS__{backend.upper()}_URL": url,
            "AUTHSVC_EVENTS__CHANNEL": new_channel(),
            "AUTHSVC_ACTUATOR__SHOW_DETAILS": "always",
        }
        self.envs = []
        for n in range(3):
            home = tmp / f"host{n}"
            home.mkdir()
            self.envs.append(
                {**self.common, "HOME": str(home), "AUTHSVC_AUTH__KEY_DIR": str(home / "keys")}
            )
        self.servers: list[Server] = []

    def start(self) -> None:
        """Start the three at once (they race to create the first key)."""
        with ThreadPoolExecutor(3) as pool:
            self.servers = list(pool.map(Server, self.envs))

    @property
    def bases(self) -> list[str]:
        return [s.base for s in self.servers]

    def cli(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``authsvc ARGS`` as an operator on the first host."""
        full = {**os.environ, **(env or self.envs[0]), "AUTHSVC_BOOTSTRAP_PASSWORD": PASSWORD}
        return subprocess.run(
            [sys.executable, "-m", "entrypoints.cli", *args],
            cwd=ROOT,
            env=full,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.dsn) as conn:
            conn.execute(f'SET search_path TO "{self.schema}"')
            return conn.execute(sql).fetchall()

    def stop(self) -> None:
        for server in self.servers:
            server.stop()
        drop_pg_schema(self.dsn, self.schema)


@pytest.fixture(params=BROKERS)
def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Cluster]:
    if pg_dsn() is None:
        pytest.skip(PG_SKIP_REASON)
    url = require_broker(request.param)
    cluster = Cluster(tmp_path, request.param, url)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


async def eventually(check: Any, timeout: float = 8.0) -> None:
    """Wait until ``await check()`` is true (events travel asynchronously)."""
    deadline = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.1)


async def login(base: str, email: str = "alice@example.com") -> dict[str, Any]:
    status, pair, _ = await call(base, "POST", "/login", {"email": email, "password": PASSWORD})
    assert status == 200, pair
    return pair  # type: ignore[no-any-return]


async def test_three_instances_behave_as_one_service(cluster: Cluster) -> None:
    a, b, c = cluster.bases

    # Three simultaneous first starts: one key in the table, its private part encrypted.
    rows = cluster.rows("SELECT kid, alg, public_jwk, private_key FROM signing_keys")
    assert len(rows) == 1
    kid, alg, public_jwk, private_key = rows[0]
    assert alg == "RS256" and json.loads(public_jwk)["kid"] == kid
    assert b"PRIVATE KEY" not in bytes(private_key)
    assert not any((Path(env["HOME"]) / "keys").exists() for env in cluster.envs)

    # The JWKS is byte-identical on every instance.
    assert len({await _jwks(base) for base in cluster.bases}) == 1

    # A token from any instance verifies on all.
    assert (await call(a, "POST", "/register", {"email": "alice@example.com",
                                                 "password": PASSWORD}))[0] == 201  # fmt: skip
    pairs = [await login(base) for base in cluster.bases]
    for pair in pairs:
        assert _kid(pair["access_token"]) == kid
        for base in cluster.bases:
            assert (await call(base, "GET", "/me", token=pair["access_token"]))[0] == 200

    # Refresh atomicity across instances: of 12 concurrent refreshes of one token spread over
    # the three, exactly one succeeds.
    body = {"refresh_token": pairs[0]["refresh_token"]}
    results = await asyncio.gather(
        *(call(cluster.bases[i % 3], "POST", "/refresh", body) for i in range(12))
    )
    assert sorted(s for s, _, _ in results) == [200] + [401] * 11

    # Throttling across instances: five failures spread over the three, then the right
    # password on any of them is 429.
    wrong = {"email": "bob@example.com", "password": "not the password"}
    await call(b, "POST", "/register", {"email": "bob@example.com", "password": PASSWORD})
    statuses = [(await call(cluster.bases[i % 3], "POST", "/login", wrong))[0] for i in range(5)]
    assert statuses == [401] * 5
    right = {"email": "bob@example.com", "password": PASSWORD}
    assert (await call(c, "POST", "/login", right))[0] == 429

    # /actuator/refresh on one instance changes access_token_ttl on all three.
    created = cluster.cli("create-superadmin", "--email", ROOT_EMAIL)
    assert created.returncode == 0, created.stderr
    root = (await login(a, ROOT_EMAIL))["access_token"]
    _write(cluster.config, "[auth]\naccess_token_ttl = 120\n")
    status, result, _ = await call(a, "POST", "/actuator/refresh", token=root)
    assert status == 200 and result["changed"] == ["auth"], result

    async def ttl_everywhere() -> bool:
        return all([(await login(base))["expires_in"] == 120 for base in cluster.bases])

    await eventually(ttl_everywhere)

    # A rotation on one host is used by all: published at once (publish-ahead 3 s), signing
    # on every instance from then on, the old key still verifying.
    old_token = (await login(b))["access_token"]
    rotated = cluster.cli("keys", "rotate")
    assert rotated.returncode == 0, rotated.stderr
    assert "announced" in rotated.stdout
    new_kid = rotated.stdout.split(" key ")[1].split(":")[0]

    async def published_everywhere() -> bool:
        docs = [json.loads(await _jwks(base)) for base in cluster.bases]
        return all(new_kid in {k["kid"] for k in doc["keys"]} for doc in docs)

    await eventually(published_everywhere, timeout=2.5)
    assert len({await _jwks(base) for base in cluster.bases}) == 1

    async def signing_everywhere() -> bool:
        return all([_kid((await login(base))["access_token"]) == new_kid
                    for base in cluster.bases])  # fmt: skip

    await eventually(signing_everywhere)
    for base in cluster.bases:
        assert (await call(base, "GET", "/me", token=old_token))[0] == 200
    assert len({await _jwks(base) for base in cluster.bases}) == 1
    listing = cluster.cli("keys", "list")
    assert listing.returncode == 0 and new_kid in listing.stdout and "signing" in listing.stdout

    # Killing one instance mid-load loses no session: sessions live in the database, and the
    # other two verify the dead instance's tokens and rotate its refresh tokens.
    sessions = [await login(cluster.bases[i % 3]) for i in range(6)]
    load = asyncio.gather(
        *(
            call(cluster.bases[i % 2], "GET", "/me", token=sessions[i % 6]["access_token"])
            for i in range(60)
        )
    )
    cluster.servers[2].kill()
    assert all(status == 200 for status, _, _ in await load)
    for i, session in enumerate(sessions):
        base = cluster.bases[i % 2]
        assert (await call(base, "GET", "/me", token=session["access_token"]))[0] == 200
        status, pair, _ = await call(
            base, "POST", "/refresh", {"refresh_token": session["refresh_token"]}
        )
        assert status == 200, pair
    # The broker stayed up: the events component is UP on the survivors.
    status, health, _ = await call(a, "GET", "/actuator/health")
    assert health["components"]["events"]["status"] == "UP", health


async def test_an_unreachable_broker_does_not_stop_the_start(tmp_path: Path) -> None:
    """The broker is down: the instance serves, readiness is UP, and ``/actuator/health``
    shows the ``events`` component DOWN with the broker named (no credentials)."""
    env = {
        "HOME": str(tmp_path),
        "AUTHSVC_AUTH__KEY_DIR": str(tmp_path / "keys"),
        "AUTHSVC_STORAGE__SQLITE_PATH": str(tmp_path / "authsvc.db"),
        "AUTHSVC_EVENTS__BACKEND": "nats",
        "AUTHSVC_EVENTS__NATS_URL": "nats://user:brokerpw-7f3a@127.0.0.1:9",
        "AUTHSVC_ACTUATOR__SHOW_DETAILS": "always",
    }
    server = Server(env)
    try:
        status, ready, _ = await call(server.base, "GET", "/actuator/health/ready")
        assert status == 200 and ready["status"] == "UP", ready
        assert "events" not in ready.get("components", {})
        status, health, _ = await call(server.base, "GET", "/actuator/health")
        events = health["components"]["events"]
        assert events["status"] == "DOWN"
        assert events["details"]["broker"] == "nats://127.0.0.1:9"
        assert "brokerpw-7f3a" not in json.dumps(health)
        assert (await call(server.base, "GET", "/.well-known/jwks.json"))[0] == 200
    finally:
        server.stop()
    assert "brokerpw-7f3a" not in server.log()
