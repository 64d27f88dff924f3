"""Readiness with identity providers (docs/reference/federation.md): a provider unreachable at start
is logged and listed in readiness details (component ``federation``) while readiness stays UP; the
login page still offers the others. SQLite and PostgreSQL."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.federation_helpers import (
    provider_toml,
    upstream,  # noqa: F401 - fixture
)
from tests.e2e.helpers import ONE_PER_BACKEND, MakeClient
from tests.e2e.servers import free_port

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


async def test_an_unreachable_provider_is_listed_and_readiness_stays_up(
    make_client: MakeClient,
    upstream: dict[str, str],  # noqa: F811
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """docs/reference/federation.md (UP-12 for the secret): ``test`` (oidc-provider) is reachable,
    ``down`` (a loopback port nobody listens on) is not: readiness answers 200 UP, component
    ``federation`` UP with ``down`` unreachable (and why) and ``test`` reachable; the start
    logged it; no client secret in the answer; the login page still offers TestIdP, and
    starting at ``down`` shows the login page with a message (400), not a 500."""
    down = f"http://127.0.0.1:{free_port()}"
    config = tmp_path / "authsvc.toml"
    down_table = {"issuer": down, "client_id": "c", "client_secret": "down-secret"}
    config.write_text(provider_toml(upstream) + provider_toml(down_table, id="down", name="Down"))
    caplog.set_level(logging.WARNING, logger="authsvc.federation")
    client = await make_client(
        {"AUTHSVC_ACTUATOR__SHOW_DETAILS": "always"}, config_path=str(config)
    )
    resp = await client.get("/actuator/health/ready")
    body: dict[str, Any] = await resp.json()
    assert resp.status == 200 and body["status"] == "UP", body
    federation = body["components"]["federation"]
    assert federation["status"] == "UP"
    details = federation["details"]
    assert details["unreachable"] == ["down"]
    assert details["providers"]["test"] == {"state": "reachable", "issuer": upstream["issuer"]}
    gone = details["providers"]["down"]
    assert (gone["state"], gone["issuer"]) == ("unreachable", down)
    assert gone["error"].startswith("discovery_failed")
    text = await resp.text()
    assert "down-secret" not in text and upstream["client_secret"] not in text
    assert any("federation down: provider unreachable" in r.getMessage() for r in caplog.records)
    page = await (await client.get("/ui/login")).text()
    assert "Continue with TestIdP" in page and "Continue with Down" in page
    start = await client.get("/federation/down/start", allow_redirects=False)
    assert start.status == 400 and "did not work" in await start.text()
    health = await (await client.get("/actuator/health")).json()
    assert health["status"] == "UP" and health["components"]["federation"]["status"] == "UP"
