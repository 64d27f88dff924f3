"""End-to-end fixtures: the real aiohttp app (container, SQLite, real keys) over HTTP, and the
interop harness's npm packages and Chromium (``tests.interop.fixtures``). The helpers the tests
call are in ``tests.e2e.helpers``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from tests.e2e.helpers import DEPLOYMENTS, MakeClient
from tests.interop.fixtures import chromium, node_modules  # noqa: F401 - fixtures
from tests.pg import server_storage


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
