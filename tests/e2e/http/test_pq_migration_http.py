"""Post-quantum migration over HTTP (docs/reference/tokens-and-sessions.md; issue 32; ADR 0030), on
SQLite and PostgreSQL: RS256 and ML-DSA-65 signed side by side, one JWKS verified by PyJWT (RS256)
and dilithium-py (ML-DSA), the algorithm chosen per client, per audience, else the default; the
header's ``alg`` bound to its key; a refresh that flips the default or drops an algorithm; the
metrics and ``/actuator/info``."""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jwt
import pytest
from aiohttp.test_utils import TestClient
from dependency_injector import providers
from dilithium_py.ml_dsa import ML_DSA_65

from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from tests.e2e.helpers import ONE_PER_BACKEND, MakeClient, assert_problem, bearer
from tests.e2e.http.test_actuator_http import refresh, samples, superadmin_token, write_config
from tests.e2e.http.test_oauth_http import API, Machines, machines
from tests.fakes import FakeClock

PQ_API = "https://pq.example.com"
BOTH = {
    "AUTHSVC_AUTH__ALGORITHMS": "RS256,ML-DSA-65",
    "AUTHSVC_AUTH__ALGORITHM_BY_AUDIENCE": f'{{ "{PQ_API}" = "ML-DSA-65" }}',
    "AUTHSVC_OAUTH__RESOURCES": (
        f'[{{audience = "{API}", scopes = ["read", "write"]}}, '
        f'{{audience = "{PQ_API}", scopes = ["read", "write"]}}]'
    ),
}


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend."""
    return request.param  # type: ignore[no-any-return]


def b64d(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def header(token: str) -> dict[str, Any]:
    return json.loads(b64d(token.split(".")[0]))  # type: ignore[no-any-return]


def verify_with_jwks(token: str, jwks: dict[str, Any], audience: str) -> dict[str, Any]:
    """What a resource server does with the JWKS alone: PyJWT for RS256, dilithium-py (an
    independent FIPS 204 implementation) for ML-DSA-65 (RFC 9964: over the signing input)."""
    head = header(token)
    (jwk,) = [k for k in jwks["keys"] if k["kid"] == head["kid"]]
    assert jwk["alg"] == head["alg"]
    if head["alg"] == "RS256":
        key = jwt.PyJWK.from_dict(jwk).key
        return jwt.decode(token, key, algorithms=["RS256"], audience=audience)  # type: ignore[no-any-return]
    h, p, s = token.split(".")
    assert ML_DSA_65.verify(b64d(jwk["pub"]), f"{h}.{p}".encode(), b64d(s))
    claims: dict[str, Any] = json.loads(b64d(p))
    assert audience in ([claims["aud"]] if isinstance(claims["aud"], str) else claims["aud"])
    return claims


async def test_both_algorithms_sign_side_by_side_chosen_per_client_and_audience(
    make_client: MakeClient,
) -> None:
    m: Machines = await machines(make_client, BOTH)
    jwks = await (await m.http.get("/.well-known/jwks.json")).json()
    assert sorted(k["alg"] for k in jwks["keys"]) == ["ML-DSA-65", "RS256"]
    discovery = await (await m.http.get("/.well-known/openid-configuration")).json()
    assert set(discovery["id_token_signing_alg_values_supported"]) == {"RS256", "ML-DSA-65"}

    # The JSON API's user tokens: the default algorithm, and our own routes accept them.
    assert header(m.admin)["alg"] == "RS256"
    verify_with_jwks(m.admin, jwks, "authsvc")

    # A client asking for ML-DSA-65 gets ML-DSA tokens, whatever its audience.
    pq_client = await m.register(
        m.admin, audience=[API], access_token_signed_response_alg="ML-DSA-65"
    )
    assert pq_client["access_token_signed_response_alg"] == "ML-DSA-65"
    token = (await m.granted(pq_client))["access_token"]
    assert header(token)["alg"] == "ML-DSA-65"
    assert verify_with_jwks(token, jwks, API)["client_id"] == pq_client["client_id"]

    # An audience mapped to ML-DSA-65 gets ML-DSA; another audience the default.
    plain = await m.register(m.admin, audience=[API, PQ_API])
    assert "access_token_signed_response_alg" not in plain
    mapped = (await m.granted(plain, resource=PQ_API))["access_token"]
    assert header(mapped)["alg"] == "ML-DSA-65"
    verify_with_jwks(mapped, jwks, PQ_API)
    default = (await m.granted(plain, resource=API))["access_token"]
    assert header(default)["alg"] == "RS256"
    verify_with_jwks(default, jwks, API)

    # The client's choice moves by PATCH; an algorithm outside auth.algorithms is refused.
    resp = await m.http.patch(f"/oauth/clients/{plain['client_id']}", headers=bearer(m.admin),
                              json={"access_token_signed_response_alg": "ML-DSA-65"})  # fmt: skip
    assert resp.status == 200 and (await resp.json())["access_token_signed_response_alg"]
    assert header((await m.granted(plain, resource=API))["access_token"])["alg"] == "ML-DSA-65"
    for method, path in (
        ("POST", "/oauth/clients"),
        ("PATCH", f"/oauth/clients/{plain['client_id']}"),
    ):
        body = {"name": "x", "scopes": ["read"], "access_token_signed_response_alg": "ML-DSA-87"}
        if method == "PATCH":
            body = {"access_token_signed_response_alg": "ML-DSA-87"}
        resp = await m.http.request(method, path, json=body, headers=bearer(m.admin))
        problem = await assert_problem(resp, 422, "validation_error")
        assert "access_token_signed_response_alg" in json.dumps(problem)

    # Metrics per algorithm and kind; info lists the algorithms with their kids.
    assert (await m.http.get("/me", headers=bearer(m.admin))).status == 200
    got = samples(await (await m.http.get("/actuator/metrics")).text())
    issued, verified = "authsvc_tokens_issued_total", "authsvc_tokens_verified_total"
    assert got[(issued, (("alg", "ML-DSA-65"), ("kind", "client_credentials")))] == 3
    assert got[(issued, (("alg", "RS256"), ("kind", "client_credentials")))] == 1
    assert got[(issued, (("alg", "RS256"), ("kind", "access")))] == 2  # root and admin
    assert got[(issued, (("alg", "ML-DSA-65"), ("kind", "access")))] == 0
    assert got[(verified, (("alg", "RS256"),))] >= 1
    info = (await (await m.http.get("/actuator/info")).json())["auth"]
    kids = {k["kid"]: k["alg"] for k in jwks["keys"]}
    assert {a["alg"]: a["signing_kid"] for a in info["algorithms"]} == {
        alg: kid for kid, alg in kids.items()
    }


async def test_a_token_relabelled_with_another_alg_is_refused(make_client: MakeClient) -> None:
    """RFC 8725 §3.1: the key's algorithm, never the header's, decides."""
    env = {**BOTH, "AUTHSVC_AUTH__ALGORITHM_BY_AUDIENCE": '{ "authsvc" = "ML-DSA-65" }'}
    http = await make_client(env)
    root = await superadmin_token(http)
    assert header(root)["alg"] == "ML-DSA-65"  # user tokens follow their audience's entry
    assert (await http.get("/me", headers=bearer(root))).status == 200
    jwks = await (await http.get("/.well-known/jwks.json")).json()
    rsa_kid = next(k["kid"] for k in jwks["keys"] if k["alg"] == "RS256")
    _, p, s = root.split(".")
    for relabel in ({"alg": "RS256"}, {"alg": "RS256", "kid": rsa_kid}):
        forged = {**header(root), **relabel}
        part = base64.urlsafe_b64encode(json.dumps(forged).encode()).rstrip(b"=").decode()
        resp = await http.get("/me", headers=bearer(f"{part}.{p}.{s}"))
        await assert_problem(resp, 401, "invalid_token")


async def test_refresh_flips_the_default_and_a_dropped_algorithm_leaves_the_jwks_after_its_tokens(
    aiohttp_client: Callable[..., Awaitable[TestClient]],
    base_env: dict[str, str],
    tmp_path: Path,
) -> None:
    path = write_config(tmp_path / "authsvc.toml", '[auth]\nalgorithm = "RS256"\n')
    environ = {k: v for k, v in base_env.items() if k != "AUTHSVC_AUTH__ALGORITHM"}
    container = build_container(load_config(path, environ=environ), config_path=path,
                                environ=environ)  # fmt: skip
    clock = FakeClock(datetime.now(UTC).replace(microsecond=0))
    container.clock.override(providers.Object(clock))
    http = await aiohttp_client(create_app(container))
    root = await superadmin_token(http)

    # An unknown algorithm is refused, naming the key; nothing changes.
    write_config(tmp_path / "authsvc.toml", '[auth]\nalgorithms = ["RS256", "HS256"]\n')
    body = await assert_problem(await refresh(http, root), 422, "invalid_configuration")
    assert body["key"] == "auth.algorithms"
    write_config(tmp_path / "authsvc.toml",
                 '[auth]\nalgorithm = "RS256"\nalgorithms = ["ML-DSA-65"]\n')  # fmt: skip
    body = await assert_problem(await refresh(http, root), 422, "invalid_configuration")
    assert body["key"] == "auth.algorithms"

    # Step 1: add ML-DSA-65 to the list; step 2: make it the default.
    write_config(tmp_path / "authsvc.toml",
                 '[auth]\nalgorithm = "RS256"\nalgorithms = ["RS256", "ML-DSA-65"]\n')  # fmt: skip
    assert (await refresh(http, root)).status == 200
    assert header(await superadmin_token(http, "r2@example.com"))["alg"] == "RS256"
    write_config(tmp_path / "authsvc.toml",
                 '[auth]\nalgorithm = "ML-DSA-65"\nalgorithms = ["RS256", "ML-DSA-65"]\n')  # fmt: skip
    assert (await refresh(http, root)).status == 200
    pq = await superadmin_token(http, "r3@example.com")
    assert header(pq)["alg"] == "ML-DSA-65"

    # Step 3: drop RS256. Its signing stops at once; its key stays published (and verifies)
    # until the last RS256 token can have expired, then leaves the JWKS.
    write_config(tmp_path / "authsvc.toml",
                 '[auth]\nalgorithm = "ML-DSA-65"\nalgorithms = ["ML-DSA-65"]\n')  # fmt: skip
    assert (await refresh(http, root)).status == 200
    assert header(await superadmin_token(http, "r4@example.com"))["alg"] == "ML-DSA-65"
    jwks = await (await http.get("/.well-known/jwks.json")).json()
    assert sorted(k["alg"] for k in jwks["keys"]) == ["ML-DSA-65", "RS256"]
    assert (await http.get("/me", headers=bearer(root))).status == 200  # an RS256 token
    auth, oauth = container.auth_settings().current, container.live_config().current.oauth
    clock.advance(max(auth.access_token_ttl, oauth.client_token_ttl) + auth.leeway + 1)
    jwks = await (await http.get("/.well-known/jwks.json")).json()
    assert [k["alg"] for k in jwks["keys"]] == ["ML-DSA-65"]
