"""The README's post-quantum migration run as written against two instances (issue 32;
docs/reference/operations.md and docs/reference/tokens-and-sessions.md): two ``authsvc serve``
processes over one PostgreSQL schema and one event broker, each step one ``POST /actuator/refresh``
on one instance that every instance applies — nobody logged out, and every token verifying through
the JWKS as before.

1. add ML-DSA-65 to ``auth.algorithms``: both keys in every JWKS, tokens still RS256;
2. flip ``auth.algorithm`` to ML-DSA-65: every instance signs ML-DSA-65, the earlier RS256
   access token and refresh token still work;
3. drop RS256: signing stops, its key stays published (its tokens may still be alive).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.brokers import new_channel, new_kek, require_broker
from tests.e2e.http.test_pq_migration_http import header
from tests.e2e.processes.test_instances import PASSWORD, ROOT_EMAIL, call, eventually, login
from tests.e2e.servers import ROOT, Server
from tests.pg import PG_SKIP_REASON, drop_pg_schema, new_schema_name, pg_dsn

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


class Pair:
    """Two instances sharing a schema, a config file, a broker channel and a key-encryption
    key; the first host also runs the command line."""

    def __init__(self, tmp: Path) -> None:
        dsn = pg_dsn()
        assert dsn is not None
        self.dsn = dsn
        self.schema = new_schema_name("authsvc_pq")
        self.config = tmp / "authsvc.toml"
        self.write(["RS256"], "RS256")
        common = {
            "AUTHSVC_CONFIG": str(self.config),
            "AUTHSVC_AUTH__BCRYPT_ROUNDS": "4",
            "AUTHSVC_AUTH__KEY_ENCRYPTION_KEY": new_kek(),
            "AUTHSVC_STORAGE__BACKEND": "postgres",
            "AUTHSVC_STORAGE__POSTGRES_DSN": dsn,
            "AUTHSVC_STORAGE__POSTGRES_SCHEMA": self.schema,
            "AUTHSVC_EVENTS__BACKEND": "nats",
            "AUTHSVC_EVENTS__NATS_URL": require_broker("nats"),
            "AUTHSVC_EVENTS__CHANNEL": new_channel(),
        }
        self.envs = []
        for n in range(2):
            home = tmp / f"host{n}"
            home.mkdir()
            self.envs.append({**common, "HOME": str(home)})
        self.servers: list[Server] = []

    def write(self, algorithms: list[str], default: str) -> None:
        """The shared configuration file's ``[auth]`` table."""
        listed = ", ".join(f'"{a}"' for a in algorithms)
        self.config.write_text(f'[auth]\nalgorithm = "{default}"\nalgorithms = [{listed}]\n')

    def stop(self) -> None:
        for server in self.servers:
            server.stop()
        drop_pg_schema(self.dsn, self.schema)


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Pair]:
    if pg_dsn() is None:
        pytest.skip(PG_SKIP_REASON)
    two = Pair(tmp_path)
    try:
        two.servers = [Server(env) for env in two.envs]
        yield two
    finally:
        two.stop()


async def _jwks_algs(base: str) -> set[str]:
    status, doc, _ = await call(base, "GET", "/.well-known/jwks.json")
    assert status == 200
    return {key["alg"] for key in doc["keys"]}


async def _refresh(base: str, token: str) -> dict[str, Any]:
    status, result, _ = await call(base, "POST", "/actuator/refresh", token=token)
    assert status == 200, result
    return result  # type: ignore[no-any-return]


async def test_the_readme_steps_move_two_instances_to_ml_dsa_without_a_flag_day(
    pair: Pair,
) -> None:
    a, b = (s.base for s in pair.servers)
    status, body, _ = await call(a, "POST", "/register",
                                  {"email": "alice@example.com", "password": PASSWORD})  # fmt: skip
    assert status == 201, body
    made = subprocess.run(
        [sys.executable, "-m", "entrypoints.cli", "create-superadmin", "--email", ROOT_EMAIL],
        cwd=ROOT, env={**os.environ, **pair.envs[0], "AUTHSVC_BOOTSTRAP_PASSWORD": PASSWORD},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    root = (await login(a, ROOT_EMAIL))["access_token"]
    before = await login(b)
    assert header(before["access_token"])["alg"] == "RS256"
    assert await _jwks_algs(a) == await _jwks_algs(b) == {"RS256"}

    # Step 1: add ML-DSA-65 to the list (refresh on one instance): both keys published on both.
    pair.write(["RS256", "ML-DSA-65"], "RS256")
    await _refresh(a, root)

    async def both_published() -> bool:
        return all([await _jwks_algs(base) == {"RS256", "ML-DSA-65"} for base in (a, b)])

    await eventually(both_published)
    for base in (a, b):
        assert header((await login(base))["access_token"])["alg"] == "RS256"

    # Step 2: flip the default (refresh on the other instance): every instance signs ML-DSA-65.
    pair.write(["RS256", "ML-DSA-65"], "ML-DSA-65")
    await _refresh(b, root)

    async def ml_dsa_everywhere() -> bool:
        algs = [header((await login(base))["access_token"])["alg"] for base in (a, b)]
        return algs == ["ML-DSA-65", "ML-DSA-65"]

    await eventually(ml_dsa_everywhere)
    for base in (a, b):  # nobody logged out: the RS256 token still verifies everywhere
        assert (await call(base, "GET", "/me", token=before["access_token"]))[0] == 200
    status, rotated, _ = await call(a, "POST", "/refresh",
                                     {"refresh_token": before["refresh_token"]})  # fmt: skip
    assert status == 200, rotated
    assert header(rotated["access_token"])["alg"] == "ML-DSA-65"
    for base in (a, b):
        assert (await call(base, "GET", "/me", token=rotated["access_token"]))[0] == 200

    # Step 3: drop RS256: no instance signs it any more, its key stays published while its
    # tokens may live, and they still verify.
    pair.write(["ML-DSA-65"], "ML-DSA-65")
    result = await _refresh(a, root)
    assert "auth" in result["changed"], result

    async def only_ml_dsa_signs_everywhere() -> bool:
        signing = []
        for base in (a, b):
            status, info, _ = await call(base, "GET", "/actuator/info", token=root)
            assert status == 200, info
            listed = {x["alg"]: x["signing"] for x in info["auth"]["algorithms"]}
            signing.append(listed)
        # RS256 no longer signs but is still listed: its key verifies until its tokens expire.
        return signing == [{"RS256": False, "ML-DSA-65": True}] * 2

    await eventually(only_ml_dsa_signs_everywhere)
    for base in (a, b):
        assert header((await login(base))["access_token"])["alg"] == "ML-DSA-65"
        assert "RS256" in await _jwks_algs(base)
        assert (await call(base, "GET", "/me", token=before["access_token"]))[0] == 200
