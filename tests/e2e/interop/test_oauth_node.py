"""An independent client in another language drives the OAuth endpoints
(docs/reference/oauth-and-oidc.md): panva's oauth4webapi (installed from npm into a temporary
folder, run by node) discovers the metadata, gets a Bearer token (``client_secret_basic``) and a
DPoP-bound one (``client_secret_post``), introspects and revokes — on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from tests.e2e.helpers import ONE_PER_BACKEND
from tests.e2e.http.test_oauth_http import SHARED_SCOPES, Machines, machines
from tests.e2e.servers import free_port

OAUTH4WEBAPI = "oauth4webapi@3.8.8"
SCRIPT = Path(__file__).resolve().parents[1] / "oauth4webapi_client.mjs"


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend."""
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def node_client(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with oauth4webapi installed from the npm registry and the client script."""
    npm = shutil.which("npm")
    assert npm is not None and shutil.which("node"), "node and npm are needed (Debian nodejs)"
    folder = tmp_path_factory.mktemp("oauth4webapi")
    subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(folder),
         OAUTH4WEBAPI],
        check=True, timeout=300, capture_output=True,
    )  # fmt: skip
    shutil.copy(SCRIPT, folder / SCRIPT.name)
    return folder


async def test_oauth4webapi_discovers_gets_binds_introspects_and_revokes(
    aiohttp_client: Callable[..., Awaitable[TestClient]],
    base_env: dict[str, str],
    node_client: Path,
) -> None:
    port = free_port()
    issuer = f"http://127.0.0.1:{port}"
    environ = {**base_env, "AUTHSVC_AUTH__ISSUER": issuer,
               "AUTHSVC_OAUTH__SHARED_SCOPES": SHARED_SCOPES}  # fmt: skip
    app = create_app(build_container(load_config(environ=environ), environ=environ))
    http = await aiohttp_client(app, server_kwargs={"port": port})

    async def made(_: dict[str, str] | None = None) -> TestClient:
        return http

    m: Machines = await machines(made)
    client = await m.register(m.admin)
    node = await asyncio.create_subprocess_exec(
        "node", str(node_client / SCRIPT.name), cwd=node_client,
        env={"ISSUER": issuer, "CLIENT_ID": client["client_id"],
             "CLIENT_SECRET": client["client_secret"], "PATH": "/usr/bin:/bin"},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(node.communicate(), timeout=60)
    assert node.returncode == 0, err.decode()
    seen = json.loads(out)
    assert seen["bearer"] == {"token_type": "bearer", "scope": "read", "expires_in": 300}
    assert seen["bound"] == {"token_type": "dpop"}
    assert seen["introspected"]["active"] is True
    assert seen["introspected"]["token_type"] == "DPoP" and seen["introspected"]["cnf"]["jkt"]
    assert seen["revoked"] == {"active": False}
