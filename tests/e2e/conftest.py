"""End-to-end fixtures: the real aiohttp app (container, SQLite, real keys) over HTTP."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from entrypoints.config import load_config
from entrypoints.container import Container, build_container
from entrypoints.http.app import create_app
from entrypoints.http.keys import CONTAINER
from tests.pg import server_storage

ALGORITHMS = ["RS256", "ML-DSA-65", "ML-DSA-87"]

MakeClient = Callable[..., Awaitable[TestClient]]


DEPLOYMENTS = [
    pytest.param(("sqlite", "RS256"), id="sqlite-RS256"),
    pytest.param(("sqlite", "ML-DSA-65"), id="sqlite-ML-DSA-65"),
    pytest.param(("sqlite", "ML-DSA-87"), id="sqlite-ML-DSA-87"),
    pytest.param(("postgres", "RS256"), id="postgres-RS256", marks=pytest.mark.postgres),
]
"""Every e2e test runs on SQLite with each signing algorithm, and once on Postgres."""

ONE_PER_BACKEND = [DEPLOYMENTS[0], DEPLOYMENTS[-1]]
"""SQLite and Postgres with RS256: for a module whose behaviour does not depend on the signing
algorithm (it overrides ``deployment`` with these params)."""

USER_KEYS = frozenset(
    {
        "id",
        "email",
        "role",
        "org_id",
        "created_at",
        "disabled",
        "email_verified",
        "mfa_enabled",
        "passkeys",
    }
)
"""The keys of the contract's ``User`` (never a password hash)."""


@pytest.fixture(params=DEPLOYMENTS)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """(storage backend, signing algorithm) of the app under test."""
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def backend(deployment: tuple[str, str]) -> str:
    """The storage backend of the app under test."""
    return deployment[0]


@pytest.fixture
def algorithm(deployment: tuple[str, str]) -> str:
    """The ``auth.algorithm`` of the app under test."""
    return deployment[1]


@pytest.fixture
def storage_env(backend: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    """Environment selecting the storage backend of the app under test: a SQLite file in
    ``tmp_path``, or a fresh schema of the test PostgreSQL (dropped afterwards) — where the
    signing keys live in the database too (``auth.key_store`` defaults to ``database`` on
    PostgreSQL), encrypted under a fresh key-encryption key."""
    yield from server_storage(backend, tmp_path, "authsvc_e2e")


@pytest.fixture
def base_env(tmp_path: Path, storage_env: dict[str, str], algorithm: str) -> dict[str, str]:
    """The app's environment: low bcrypt cost (by configuration), keys in ``tmp_path``, and no
    limit on writes from anyone (every test client is one address, 127.0.0.1, standing for
    many users; ``test_anonymous_writes`` sets the limit it tests)."""
    return {
        "AUTHSVC_AUTH__BCRYPT_ROUNDS": "4",
        "AUTHSVC_SERVER__ANONYMOUS_WRITE_RATE": "0",
        "AUTHSVC_AUTH__KEY_DIR": str(tmp_path / "keys"),
        "AUTHSVC_AUTH__ALGORITHM": algorithm,
        **storage_env,
    }


@pytest.fixture
def make_client(
    aiohttp_client: Callable[..., Awaitable[TestClient]], base_env: dict[str, str]
) -> MakeClient:
    """``await make_client(**{"AUTHSVC_...": value})`` → a client of a fresh app."""

    async def make(env: dict[str, str] | None = None, config_path: str | None = None) -> TestClient:
        environ = {**base_env, **(env or {})}
        if config_path is not None:  # a test's configuration file decides the algorithm
            environ.pop("AUTHSVC_AUTH__ALGORITHM", None)
        config = load_config(config_path, environ=environ)
        container = build_container(config, config_path=config_path, environ=environ)
        return await aiohttp_client(create_app(container))

    return make


@pytest.fixture
async def client(make_client: MakeClient) -> TestClient:
    """A client of the app of this deployment (storage × algorithm)."""
    return await make_client()


def container_of(client: TestClient) -> Container:
    return client.app[CONTAINER]


PASSWORD = "correct horse battery"


async def register_and_login(
    client: TestClient, email: str = "alice@example.com", password: str = PASSWORD
) -> dict[str, Any]:
    """Register ``email`` and log in; returns the TokenPair body."""
    resp = await client.post("/register", json={"email": email, "password": password})
    assert resp.status == 201, await resp.text()
    resp = await client.post("/login", json={"email": email, "password": password})
    assert resp.status == 200, await resp.text()
    return await resp.json()  # type: ignore[no-any-return]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def assert_problem(resp: Any, status: int, code: str) -> dict[str, Any]:
    """Assert an RFC 9457 problem+json response with the contract's ``code``."""
    assert resp.status == status, await resp.text()
    assert resp.headers["Content-Type"].startswith("application/problem+json")
    body = await resp.json()
    assert body["status"] == status and body["code"] == code
    assert {"type", "title", "detail"} <= set(body)
    return body  # type: ignore[no-any-return]
