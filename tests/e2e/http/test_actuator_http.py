"""The actuator of authsvc over HTTP (docs/reference/operations.md; ADR 0006): health, liveness,
readiness, info, metrics and refresh through the real app (container, storage, real keys), plus
tracing.

Nothing of our own code is mocked: a DOWN database is a closed connection, configuration
changes are rewritten TOML files, tokens are real.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_families
from prometheus_client.parser import text_string_to_metric_families

from adapters.crypto.keystore import KeyStore
from adapters.crypto.mldsa import SignerUnavailable
from adapters.crypto.signing_keys import mldsa_backend
from domain.policy import ActuatorOperation
from entrypoints.actuator import OPERATIONS
from entrypoints.config import ConfigError, load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from entrypoints.telemetry import Telemetry
from tests.e2e.helpers import (
    PASSWORD,
    MakeClient,
    assert_problem,
    bearer,
    container_of,
    register_and_login,
)
from tests.no_prometheus import REFUSE_PROMETHEUS

REPO_ROOT = Path(__file__).resolve().parents[3]
TEXT_0_0_4 = "text/plain; version=0.0.4; charset=utf-8"
OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"


# --------------------------------------------------------------------------- helpers


async def superadmin_token(client: TestClient, email: str = "root@example.com") -> str:
    """Create a superadmin through the operator's use case and log it in."""
    await container_of(client).create_superadmin()(email, PASSWORD)
    resp = await client.post("/login", json={"email": email, "password": PASSWORD})
    assert resp.status == 200, await resp.text()
    return str((await resp.json())["access_token"])


async def token_with_role(client: TestClient, email: str, role: str) -> str:
    """Register ``email``, give it ``role`` through the operator's use case, log in."""
    await client.post("/register", json={"email": email, "password": PASSWORD})
    await container_of(client).set_role_by_operator()(email, role)
    resp = await client.post("/login", json={"email": email, "password": PASSWORD})
    assert resp.status == 200, await resp.text()
    return str((await resp.json())["access_token"])


def jwt_part(token: str, index: int) -> dict[str, Any]:
    part = token.split(".")[index]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))  # type: ignore[no-any-return]


def write_config(path: Path, text: str) -> str:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return str(path)


def samples(
    body: str, *, openmetrics: bool = False
) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """``{(sample name, sorted labels): value}`` of an exposition body."""
    parse = om_families if openmetrics else text_string_to_metric_families
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in parse(body)
        for s in family.samples
    }


async def refresh(client: TestClient, token: str) -> Any:
    return await client.post("/actuator/refresh", headers=bearer(token))


# --------------------------------------------------------------------------- health


async def test_health_is_up_with_db_and_signing_key_for_a_superadmin(
    client: TestClient, algorithm: str
) -> None:
    token = await superadmin_token(client)
    resp = await client.get("/actuator/health", headers=bearer(token))
    assert resp.status == 200
    assert resp.headers["Content-Type"].startswith("application/json")
    assert resp.headers["Cache-Control"] == "no-store"
    body = await resp.json()
    assert body["status"] == "UP"
    assert set(body["components"]) == {"db", "signingKey", "readinessState", "events", "federation"}
    #  No identity provider configured: the component is UP and lists none
    # (docs/reference/federation.md).
    assert body["components"]["federation"] == {"status": "UP", "details": {"providers": {}}}
    assert body["components"]["readinessState"] == {
        "status": "UP",
        "details": {"state": "ACCEPTING_TRAFFIC"},
    }
    db, key = body["components"]["db"], body["components"]["signingKey"]
    assert db["status"] == "UP" and db["details"]["backend"] in {"sqlite", "postgres"}
    assert body["components"]["events"] == {"status": "UP", "details": {"backend": "memory"}}
    assert key["status"] == "UP"
    assert key["details"]["alg"] == algorithm
    jwks = await (await client.get("/.well-known/jwks.json")).json()
    assert key["details"]["kid"] == jwks["keys"][0]["kid"]


async def test_health_details_by_role_when_authorized(client: TestClient) -> None:
    """Default ``show_details = when_authorized``: org_admin and superadmin see components and
    details; anonymous callers, viewers, operators and bad tokens see the status only."""
    admin = await token_with_role(client, "admin@example.com", "org_admin")
    viewer = (await register_and_login(client, "viewer@example.com"))["access_token"]
    operator = await token_with_role(client, "op@example.com", "operator")
    resp = await client.get("/actuator/health", headers=bearer(admin))
    assert set((await resp.json())["components"]) == {
        "db",
        "signingKey",
        "readinessState",
        "events",
        "federation",
    }
    for headers in ({}, bearer(viewer), bearer(operator), bearer("not.a.token")):
        resp = await client.get("/actuator/health", headers=headers)
        assert resp.status == 200
        assert await resp.json() == {"status": "UP"}


async def test_liveness_and_readiness(client: TestClient) -> None:
    live = await client.get("/actuator/health/live")
    assert live.status == 200 and await live.json() == {"status": "UP"}
    token = await superadmin_token(client)
    ready = await client.get("/actuator/health/ready", headers=bearer(token))
    assert ready.status == 200
    body = await ready.json()
    assert body["status"] == "UP"
    # The event bus is not a readiness indicator: serving tokens does not need the broker.
    assert set(body["components"]) == {"db", "signingKey", "readinessState", "federation"}
    assert (await client.get("/actuator/health/ready")).status == 200


async def test_readiness_turns_down_once_shutdown_begins(client: TestClient) -> None:
    token = await superadmin_token(client)
    container_of(client).readiness_state().refuse_traffic()  # what SIGTERM does first
    ready = await client.get("/actuator/health/ready", headers=bearer(token))
    assert ready.status == 503
    body = await ready.json()
    assert body["components"]["readinessState"] == {
        "status": "DOWN",
        "details": {"state": "REFUSING_TRAFFIC"},
    }
    assert (await client.get("/actuator/health/live")).status == 200


async def test_a_closed_database_is_down_503_but_liveness_stays_up(client: TestClient) -> None:
    token = await superadmin_token(client)
    await container_of(client).storage().close()  # a real cause: the connection is gone

    resp = await client.get("/actuator/health")
    assert resp.status == 503
    assert await resp.json() == {"status": "DOWN"}
    ready = await client.get("/actuator/health/ready")
    assert ready.status == 503 and (await ready.json())["status"] == "DOWN"
    live = await client.get("/actuator/health/live")
    assert live.status == 200 and await live.json() == {"status": "UP"}

    # The superadmin still reads why (authorized by its verified token while storage is down).
    resp = await client.get("/actuator/health", headers=bearer(token))
    assert resp.status == 503
    body = await resp.json()
    assert body["components"]["db"]["status"] == "DOWN"
    assert "error" in body["components"]["db"]["details"]
    assert body["components"]["signingKey"]["status"] == "UP"


# --------------------------------------------------------------------------- info


async def test_info_names_the_app_and_no_secret(
    make_client: MakeClient, base_env: dict[str, str], algorithm: str
) -> None:
    client = await make_client()
    resp = await client.get("/actuator/info")
    assert resp.status == 200
    body = await resp.json()
    assert body["app"]["name"] == "authsvc" and body["app"]["version"]
    assert body["python"]["version"]
    assert body["auth"]["algorithm"] == algorithm
    assert body["storage"]["backend"] == base_env["AUTHSVC_STORAGE__BACKEND"]
    text = await resp.text()
    for value in base_env.values():
        if "/" in value or "://" in value:  # key dir, database path, DSN
            assert value not in text


# --------------------------------------------------------------------------- metrics


async def test_metrics_count_http_logins_refreshes_reuse_and_tokens(
    client: TestClient, algorithm: str
) -> None:
    pair = await register_and_login(client)
    resp = await client.post("/login", json={"email": "alice@example.com", "password": "wrong pw"})
    assert resp.status == 401
    first = await client.post("/refresh", json={"refresh_token": pair["refresh_token"]})
    assert first.status == 200
    reuse = await client.post("/refresh", json={"refresh_token": pair["refresh_token"]})
    assert reuse.status == 401
    unknown = await client.post("/refresh", json={"refresh_token": "no-such-token"})
    assert unknown.status == 401

    resp = await client.get("/actuator/metrics")
    assert resp.status == 200
    assert resp.headers["Content-Type"] == TEXT_0_0_4
    got = samples(await resp.text())
    assert got[("authsvc_logins_total", (("outcome", "success"),))] == 1
    assert got[("authsvc_logins_total", (("outcome", "invalid_credentials"),))] == 1
    assert got[("authsvc_logins_total", (("outcome", "rate_limited"),))] == 0
    assert got[("authsvc_token_refreshes_total", (("outcome", "success"),))] == 1
    assert got[("authsvc_token_refreshes_total", (("outcome", "reuse"),))] == 1
    assert got[("authsvc_token_refreshes_total", (("outcome", "invalid"),))] == 1
    assert got[("authsvc_refresh_token_reuse_detections_total", ())] == 1
    issued = "authsvc_access_tokens_issued_total"
    assert got[(issued, (("algorithm", algorithm), ("grant", "login")))] == 1
    assert got[(issued, (("algorithm", algorithm), ("grant", "refresh")))] == 1
    for other in {"RS256", "ML-DSA-65", "ML-DSA-87"} - {algorithm}:  # pre-created at zero
        assert got[(issued, (("algorithm", other), ("grant", "login")))] == 0
    requests = "http_server_requests_total"
    assert got[(requests, (("method", "POST"), ("route", "/login"), ("status", "200")))] == 1
    assert got[(requests, (("method", "POST"), ("route", "/refresh"), ("status", "401")))] == 2
    latency = "http_server_request_duration_seconds_count"
    assert got[(latency, (("method", "POST"), ("route", "/register")))] == 1


async def test_metrics_count_rate_limited_logins(make_client: MakeClient) -> None:
    client = await make_client({"AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "2"})
    await client.post("/register", json={"email": "bob@example.com", "password": PASSWORD})
    statuses = []
    for _ in range(3):
        resp = await client.post(
            "/login", json={"email": "bob@example.com", "password": "bad pw!!"}
        )
        statuses.append(resp.status)
    assert statuses == [401, 401, 429]
    got = samples(await (await client.get("/actuator/metrics")).text())
    assert got[("authsvc_logins_total", (("outcome", "invalid_credentials"),))] == 2
    assert got[("authsvc_logins_total", (("outcome", "rate_limited"),))] == 1


async def test_metrics_in_openmetrics_when_asked(client: TestClient) -> None:
    await register_and_login(client)
    resp = await client.get(
        "/actuator/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"}
    )
    assert resp.status == 200
    assert resp.headers["Content-Type"] == OPENMETRICS
    text = await resp.text()
    assert text.endswith("# EOF\n")
    got = samples(text, openmetrics=True)
    assert got[("authsvc_logins_total", (("outcome", "success"),))] == 1


async def test_metrics_behind_auth_when_configured(make_client: MakeClient) -> None:
    client = await make_client({"AUTHSVC_ACTUATOR__METRICS_REQUIRE_AUTH": "true"})
    resp = await client.get("/actuator/metrics")
    await assert_problem(resp, 401, "invalid_token")
    assert resp.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'
    viewer = (await register_and_login(client))["access_token"]
    assert (await client.get("/actuator/metrics", headers=bearer(viewer))).status == 200


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian: prometheus) absent")
async def test_promtool_accepts_the_metrics(client: TestClient) -> None:
    pair = await register_and_login(client)
    await client.post("/refresh", json={"refresh_token": pair["refresh_token"]})
    await client.post("/refresh", json={"refresh_token": pair["refresh_token"]})
    body = await (await client.get("/actuator/metrics")).read()
    result = subprocess.run(
        ["promtool", "check", "metrics"], input=body, capture_output=True, timeout=60
    )
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()


# --------------------------------------------------------------------------- access matrix

# Who may do what on the actuator, over HTTP (docs/reference/operations.md; domain.policy's
# ActuatorOperation, whose unit matrix is in tests/unit/domain/test_policy.py). Callers: no
# Authorization header, a token that is no JWT, and a logged-in user of each role. Health
# details (show_details = when_authorized) are "shown" or "hidden" (never an error); metrics are
# asked with actuator.metrics_require_auth = true; refresh re-reads an unchanged configuration.
_ACCESS_TABLE = """
operation               anonymous  bad_token  viewer  operator  org_admin  superadmin
see_health_details      hidden     hidden     hidden  hidden    shown      shown
read_metrics            401        401        200     200       200        200
refresh_configuration   401        401        403     403       403        200
"""
CALLERS = ("anonymous", "bad_token", "viewer", "operator", "org_admin", "superadmin")


def _parse_access(text: str) -> dict[str, dict[str, str]]:
    lines = [line.split() for line in text.strip().splitlines()]
    assert tuple(lines[0][1:]) == CALLERS
    return {row[0]: dict(zip(CALLERS, row[1:], strict=True)) for row in lines[1:]}


ACCESS = _parse_access(_ACCESS_TABLE)


def test_the_access_matrix_covers_every_actuator_operation() -> None:
    assert set(ACCESS) == {op.value for op in ActuatorOperation}
    assert set(OPERATIONS.values()) == set(ActuatorOperation)  # every library action is asked


async def caller_headers(client: TestClient, who: str) -> dict[str, str]:
    """The Authorization header of ``who`` (a column of ``_ACCESS_TABLE``)."""
    if who == "anonymous":
        return {}
    if who == "bad_token":
        return bearer("not.a.jwt")
    if who == "superadmin":
        return bearer(await superadmin_token(client))
    return bearer(await token_with_role(client, f"{who}@example.com", who))


@pytest.mark.parametrize("operation", sorted(ACCESS))
async def test_actuator_access_matrix(make_client: MakeClient, operation: str) -> None:
    client = await make_client({"AUTHSVC_ACTUATOR__METRICS_REQUIRE_AUTH": "true"})
    for who, expected in ACCESS[operation].items():
        headers = await caller_headers(client, who)
        if operation == "see_health_details":
            for path in ("/actuator/health", "/actuator/health/ready"):
                resp = await client.get(path, headers=headers)
                assert resp.status == 200, (who, path)
                shown = "components" in await resp.json()
                assert shown is (expected == "shown"), (who, path)
            continue
        if operation == "read_metrics":
            resp = await client.get("/actuator/metrics", headers=headers)
        else:
            resp = await client.post("/actuator/refresh", headers=headers)
        if expected == "401":
            await assert_problem(resp, 401, "invalid_token")
            assert resp.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'
        elif expected == "403":
            await assert_problem(resp, 403, "forbidden")
        else:
            assert resp.status == int(expected), (who, await resp.text())
            if operation == "refresh_configuration":
                assert await resp.json() == {"changed": [], "restart_required": []}


async def test_a_demoted_admin_loses_health_details_at_once(client: TestClient) -> None:
    """The caller is loaded afresh per request: the token's ``role`` claim is not believed."""
    token = await token_with_role(client, "admin@example.com", "org_admin")
    assert (
        "components" in await (await client.get("/actuator/health", headers=bearer(token))).json()
    )
    await container_of(client).set_role_by_operator()("admin@example.com", "viewer")
    body = await (await client.get("/actuator/health", headers=bearer(token))).json()
    assert body == {"status": "UP"}


# --------------------------------------------------------------------------- show_details


@pytest.mark.parametrize(
    ("mode", "anonymous", "superadmin"),
    [
        ("never", {"status"}, {"status"}),
        ("when_authorized", {"status"}, {"status", "components"}),
        ("always", {"status", "components"}, {"status", "components"}),
    ],
)
async def test_show_details_modes(
    make_client: MakeClient, mode: str, anonymous: set[str], superadmin: set[str]
) -> None:
    client = await make_client({"AUTHSVC_ACTUATOR__SHOW_DETAILS": mode})
    token = await superadmin_token(client)
    assert set(await (await client.get("/actuator/health")).json()) == anonymous
    body = await (await client.get("/actuator/health", headers=bearer(token))).json()
    assert set(body) == superadmin
    if "components" in body:
        assert "details" in body["components"]["db"]


# --------------------------------------------------------------------------- refresh


async def test_refresh_needs_a_superadmin(client: TestClient) -> None:
    resp = await client.post("/actuator/refresh")
    await assert_problem(resp, 401, "invalid_token")
    assert resp.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'
    await assert_problem(await refresh(client, "garbage"), 401, "invalid_token")
    viewer = (await register_and_login(client))["access_token"]
    await assert_problem(await refresh(client, viewer), 403, "forbidden")
    admin = await token_with_role(client, "admin@example.com", "org_admin")
    await assert_problem(await refresh(client, admin), 403, "forbidden")
    root = await superadmin_token(client)
    resp = await refresh(client, root)
    assert resp.status == 200
    assert await resp.json() == {"changed": [], "restart_required": []}


async def test_new_access_token_ttl_applies_to_the_next_login(
    make_client: MakeClient, tmp_path: Path
) -> None:
    path = write_config(tmp_path / "authsvc.toml", "[auth]\naccess_token_ttl = 600\n")
    client = await make_client(config_path=path)
    root = await superadmin_token(client)
    pair = await register_and_login(client)
    assert pair["expires_in"] == 600

    write_config(tmp_path / "authsvc.toml", "[auth]\naccess_token_ttl = 120\n")
    resp = await refresh(client, root)
    assert resp.status == 200, await resp.text()
    assert await resp.json() == {"changed": ["auth"], "restart_required": []}

    resp = await client.post("/login", json={"email": "alice@example.com", "password": PASSWORD})
    body = await resp.json()
    assert body["expires_in"] == 120
    claims = jwt_part(body["access_token"], 1)
    assert claims["exp"] - claims["iat"] == 120
    # A second refresh with the same file changes nothing.
    assert await (await refresh(client, root)).json() == {"changed": [], "restart_required": []}


async def test_new_show_details_applies_to_the_next_health_call(
    make_client: MakeClient, tmp_path: Path
) -> None:
    path = write_config(tmp_path / "authsvc.toml", '[actuator]\nshow_details = "never"\n')
    client = await make_client(config_path=path)
    root = await superadmin_token(client)
    assert await (await client.get("/actuator/health")).json() == {"status": "UP"}

    write_config(tmp_path / "authsvc.toml", '[actuator]\nshow_details = "always"\n')
    resp = await refresh(client, root)
    assert await resp.json() == {"changed": ["actuator"], "restart_required": []}
    body = await (await client.get("/actuator/health")).json()
    assert body["components"]["db"]["details"]


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[auth]\naccess_token_ttl = -5\n", "auth.access_token_ttl"),
        ("[auth]\nno_such_key = 1\n", "auth.no_such_key"),
        ('[actuator]\nshow_details = "sometimes"\n', "actuator.show_details"),
        ("[auth\naccess_token_ttl = 1\n", None),  # not TOML: the key is the file
        ('[server]\ntrusted_proxies = ["not-an-ip"]\n', "server.trusted_proxies"),
        ('[auth]\nissuer = "not a url"\n', "auth.issuer"),
        ("[actuator]\nindicator_timeout = 0\n", "actuator.indicator_timeout"),
    ],
)
async def test_an_invalid_file_changes_nothing_and_answers_422(
    make_client: MakeClient, tmp_path: Path, text: str, key: str | None
) -> None:
    path = write_config(tmp_path / "authsvc.toml", "[auth]\naccess_token_ttl = 600\n")
    client = await make_client(config_path=path)
    root = await superadmin_token(client)

    write_config(tmp_path / "authsvc.toml", text)
    resp = await refresh(client, root)
    body = await assert_problem(resp, 422, "invalid_configuration")
    assert body["key"] == (key if key is not None else path)
    assert body["errors"][0]["field"] == body["key"]

    login = await client.post("/login", json={"email": "root@example.com", "password": PASSWORD})
    assert (await login.json())["expires_in"] == 600  # nothing changed
    assert container_of(client).live_config().current.auth.access_token_ttl == 600


async def test_a_storage_change_needs_a_restart(make_client: MakeClient, tmp_path: Path) -> None:
    path = write_config(tmp_path / "authsvc.toml", "[storage]\npool_max_size = 5\n")
    client = await make_client(config_path=path)
    root = await superadmin_token(client)
    write_config(
        tmp_path / "authsvc.toml",
        "[storage]\npool_max_size = 7\n[auth]\naccess_token_ttl = 300\n",
    )
    resp = await refresh(client, root)
    assert await resp.json() == {"changed": ["auth", "storage"], "restart_required": ["storage"]}
    # The running storage is untouched, and the service keeps working.
    assert container_of(client).config().storage.pool_max_size == 5
    assert (await client.get("/actuator/health/ready")).status == 200


async def test_algorithm_switch_by_refresh(make_client: MakeClient, tmp_path: Path) -> None:
    path = write_config(tmp_path / "authsvc.toml", '[auth]\nalgorithm = "RS256"\n')
    client = await make_client(config_path=path)
    root = await superadmin_token(client)
    before = await register_and_login(client)
    assert jwt_part(before["access_token"], 0)["alg"] == "RS256"

    write_config(tmp_path / "authsvc.toml", '[auth]\nalgorithm = "ML-DSA-65"\n')
    resp = await refresh(client, root)
    assert await resp.json() == {"changed": ["auth"], "restart_required": []}

    # A token from before still works; new tokens are ML-DSA-65; the JWKS lists both keys.
    assert (await client.get("/me", headers=bearer(before["access_token"]))).status == 200
    after = await client.post("/login", json={"email": "alice@example.com", "password": PASSWORD})
    token = (await after.json())["access_token"]
    assert jwt_part(token, 0)["alg"] == "ML-DSA-65"
    assert (await client.get("/me", headers=bearer(token))).status == 200
    rotated = await client.post("/refresh", json={"refresh_token": before["refresh_token"]})
    assert jwt_part((await rotated.json())["access_token"], 0)["alg"] == "ML-DSA-65"
    jwks = await (await client.get("/.well-known/jwks.json")).json()
    assert {k["alg"] for k in jwks["keys"]} == {"RS256", "ML-DSA-65"}

    health = await (await client.get("/actuator/health", headers=bearer(root))).json()
    assert health["components"]["signingKey"]["details"]["alg"] == "ML-DSA-65"
    info = await (await client.get("/actuator/info")).json()
    assert info["auth"]["algorithm"] == "ML-DSA-65"
    got = samples(await (await client.get("/actuator/metrics")).text())
    issued = "authsvc_access_tokens_issued_total"
    assert got[(issued, (("algorithm", "ML-DSA-65"), ("grant", "login")))] == 1
    assert got[(issued, (("algorithm", "ML-DSA-65"), ("grant", "refresh")))] == 1
    assert got[(issued, (("algorithm", "RS256"), ("grant", "login")))] == 2


def liboqs_is_absent() -> bool:
    try:
        mldsa_backend("liboqs")
    except SignerUnavailable:
        return True
    return False


@pytest.mark.parametrize("cause", ["liboqs_absent", "corrupt_key_file"])
async def test_a_refresh_the_signer_refuses_changes_nothing(
    make_client: MakeClient, tmp_path: Path, base_env: dict[str, str], cause: str
) -> None:
    """All or nothing (ADR 0011): when the signer cannot serve the new ``auth.algorithm`` (its
    ML-DSA backend is missing, or its key file is unusable), the refresh answers 422 naming the
    key and nothing is applied — not the algorithm, not the issuer, not the token lifetime, not
    the other prefixes of the same file. /actuator/info, the discovery document, the JWKS and
    the tokens issued afterwards all still show the old algorithm."""
    old_issuer, new_issuer = "http://old.example", "http://new.example"
    path = write_config(
        tmp_path / "authsvc.toml", f'[auth]\nalgorithm = "RS256"\nissuer = "{old_issuer}"\n'
    )
    client = await make_client(config_path=path)
    root = await superadmin_token(client)
    if cause == "liboqs_absent":
        if not liboqs_is_absent():
            pytest.skip("liboqs is installed here: its backend cannot be refused")
        backend, key = "liboqs", "auth.mldsa_backend"
    else:  # the key file of ML-DSA-65 holds no seed: the signer refuses to load it
        if "AUTHSVC_AUTH__KEY_ENCRYPTION_KEY" in base_env:
            pytest.skip(
                "the keys are in the database here (tests/unit/adapters/crypto/test_db_keystore.py)"
            )
        KeyStore(base_env["AUTHSVC_AUTH__KEY_DIR"]).key_path("ML-DSA-65").write_bytes(b"no seed")
        backend, key = "cryptography", "auth.algorithm"
    write_config(
        tmp_path / "authsvc.toml",
        f'[auth]\nalgorithm = "ML-DSA-65"\nmldsa_backend = "{backend}"\n'
        f'issuer = "{new_issuer}"\naccess_token_ttl = 120\n'
        '[actuator]\nshow_details = "always"\n',
    )

    body = await assert_problem(await refresh(client, root), 422, "invalid_configuration")
    assert body["key"] == key
    assert "changed" not in body

    info = await (await client.get("/actuator/info")).json()
    assert info["auth"]["algorithm"] == "RS256"
    assert info["auth"]["issuer"] == old_issuer
    discovery = await (await client.get("/.well-known/openid-configuration")).json()
    assert discovery["issuer"] == old_issuer
    assert discovery["id_token_signing_alg_values_supported"] == ["RS256"]
    jwks = await (await client.get("/.well-known/jwks.json")).json()
    assert {k["alg"] for k in jwks["keys"]} == {"RS256"}
    assert await (await client.get("/actuator/health")).json() == {"status": "UP"}  # no details
    login = await client.post("/login", json={"email": "root@example.com", "password": PASSWORD})
    pair = await login.json()
    assert pair["expires_in"] == 900
    assert jwt_part(pair["access_token"], 0)["alg"] == "RS256"
    assert jwt_part(pair["access_token"], 1)["iss"] == old_issuer
    assert (await client.get("/me", headers=bearer(pair["access_token"]))).status == 200
    assert container_of(client).live_config().current.auth.algorithm == "RS256"

    # Once the file is put back, a refresh finds nothing to change.
    write_config(
        tmp_path / "authsvc.toml", f'[auth]\nalgorithm = "RS256"\nissuer = "{old_issuer}"\n'
    )
    assert await (await refresh(client, root)).json() == {"changed": [], "restart_required": []}


# --------------------------------------------------------------------------- OpenAPI


async def test_openapi_describes_the_actuator(client: TestClient) -> None:
    doc = await (await client.get("/openapi.json")).json()
    paths = doc["paths"]
    for path in ("/actuator/health", "/actuator/health/live", "/actuator/health/ready",
                 "/actuator/info", "/actuator/metrics"):  # fmt: skip
        assert set(paths[path]) == {"get"}
    assert set(paths["/actuator/refresh"]) == {"post"}
    assert paths["/actuator/refresh"]["post"]["security"] == [{"bearerAuth": []}]
    assert "503" in paths["/actuator/health"]["get"]["responses"]


# --------------------------------------------------------------------------- tracing


async def test_spans_per_request_and_use_case_and_no_secret_in_them(
    aiohttp_client: Callable[..., Awaitable[TestClient]], base_env: dict[str, str]
) -> None:
    exporter = InMemorySpanExporter()
    container = build_container(load_config(environ=base_env), environ=base_env)
    container.telemetry.override(Telemetry.with_exporter(exporter))
    client = await aiohttp_client(create_app(container))

    pair = await register_and_login(client, "trace@example.com", PASSWORD)
    rotated = await (
        await client.post("/refresh", json={"refresh_token": pair["refresh_token"]})
    ).json()
    new_password = "another secret phrase"
    resp = await client.post(
        "/me/password",
        json={"old_password": PASSWORD, "new_password": new_password},
        headers=bearer(rotated["access_token"]),
    )
    assert resp.status == 204
    await client.post("/login", json={"email": "trace@example.com", "password": "wrong one!"})

    spans = exporter.get_finished_spans()
    by_name = {s.name: s for s in spans}
    login = by_name["POST /login"]
    assert login.attributes is not None
    assert login.attributes["http.request.method"] == "POST"
    assert login.attributes["http.route"] == "/login"
    assert login.attributes["http.response.status_code"] in (200, 401)
    for name in ("AuthService.register", "AuthService.login", "AuthService.refresh",
                 "AuthService.change_password", "AuthService.authenticate"):  # fmt: skip
        assert name in by_name
    # The use-case span is a child of the request span.
    use_case = next(s for s in spans if s.name == "AuthService.refresh")
    request = next(s for s in spans if s.name == "POST /refresh")
    assert use_case.parent is not None and use_case.parent.span_id == request.context.span_id
    failed = [s for s in spans if s.name == "AuthService.login" and s.attributes
              and s.attributes.get("error.type") == "InvalidCredentials"]  # fmt: skip
    assert failed

    secrets = [PASSWORD, new_password, pair["access_token"], pair["refresh_token"],
               rotated["access_token"], rotated["refresh_token"]]  # fmt: skip
    for span in spans:
        values = [str(v) for v in (span.attributes or {}).values()]
        values += [str(v) for e in span.events for v in (e.attributes or {}).values()]
        values.append(span.name)
        for value in values:
            for secret in secrets:
                assert secret not in value, (span.name, value)


async def test_otlp_without_its_package_fails_at_start(base_env: dict[str, str]) -> None:
    config = load_config(environ={**base_env, "AUTHSVC_TELEMETRY__EXPORTER": "otlp"})
    with pytest.raises(ConfigError) as raised:
        create_app(build_container(config))
    assert raised.value.key == "telemetry.exporter"
    assert "opentelemetry-exporter-otlp-proto-http" in raised.value.message


async def test_refresh_to_otlp_without_its_package_is_422(
    make_client: MakeClient, tmp_path: Path
) -> None:
    path = write_config(tmp_path / "authsvc.toml", '[telemetry]\nexporter = "none"\n')
    client = await make_client(config_path=path)
    root = await superadmin_token(client)
    write_config(tmp_path / "authsvc.toml", '[telemetry]\nexporter = "otlp"\n')
    body = await assert_problem(await refresh(client, root), 422, "invalid_configuration")
    assert body["key"] == "telemetry.exporter"


async def test_console_exporter_prints_spans(
    make_client: MakeClient, capsys: pytest.CaptureFixture[str]
) -> None:
    client = await make_client({"AUTHSVC_TELEMETRY__EXPORTER": "console"})
    assert (await client.get("/actuator/health/live")).status == 200
    container_of(client).telemetry().shutdown()  # flushes the batch
    assert '"GET /actuator/health/live"' in capsys.readouterr().out


# --------------------------------------------------------------------------- without the extra

NO_PROMETHEUS = REFUSE_PROMETHEUS + textwrap.dedent(
    """
    import asyncio, importlib.abc, json, sys


    from aiohttp.test_utils import TestClient, TestServer
    from entrypoints.config import load_config
    from entrypoints.container import build_container
    from entrypoints.http.app import create_app

    async def main():
        env = json.loads(sys.argv[1])
        app = create_app(build_container(load_config(environ=env), environ=env))
        async with TestClient(TestServer(app)) as client:
            creds = {"email": "a@example.com", "password": "correct horse battery"}
            register = await client.post("/register", json=creds)
            login = await client.post("/login", json=creds)
            metrics = await client.get("/actuator/metrics")
            health = await client.get("/actuator/health")
            print(json.dumps({
                "register": register.status, "login": login.status,
                "metrics": metrics.status, "metrics_body": await metrics.json(),
                "health": health.status,
                "prometheus_loaded": any(m.startswith("prometheus_client") for m in sys.modules),
            }))

    asyncio.run(main())
    """
)


@pytest.mark.parametrize("deployment", [("sqlite", "RS256")], ids=["sqlite-RS256"])
def test_the_service_works_without_the_metrics_extra(base_env: dict[str, str]) -> None:
    """Once (a fresh interpreter that cannot import prometheus_client: twenty seconds): the
    missing extra changes no storage or signing path."""
    result = subprocess.run(
        [sys.executable, "-c", NO_PROMETHEUS, json.dumps(base_env)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert (out["register"], out["login"], out["health"]) == (201, 200, 200)
    assert out["metrics"] == 501 and out["metrics_body"]["code"] == "metrics_unavailable"
    assert out["prometheus_loaded"] is False
