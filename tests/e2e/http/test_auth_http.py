"""The auth endpoints of docs/reference/tokens-and-sessions.md over HTTP, for every signing
algorithm."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import stat
from pathlib import Path
from typing import Any

import jwt
import pytest
from aiohttp.test_utils import TestClient

from entrypoints.config import key_store_of
from tests.e2e.helpers import (
    PASSWORD,
    USER_KEYS,
    MakeClient,
    assert_problem,
    bearer,
    container_of,
    register_and_login,
)


async def test_walk_through(client: TestClient) -> None:
    resp = await client.post("/register", json={"email": "Alice@Example.com", "password": PASSWORD})
    assert resp.status == 201
    user = await resp.json()
    assert set(user) == USER_KEYS
    assert user["email"] == "alice@example.com" and user["role"] == "viewer"
    assert user["org_id"] == "default"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", user["created_at"])

    resp = await client.post("/login", json={"email": "alice@example.com", "password": PASSWORD})
    assert resp.status == 200
    assert resp.headers["Cache-Control"] == "no-store"
    pair = await resp.json()
    assert set(pair) == {"access_token", "refresh_token", "token_type", "expires_in",
                         "refresh_expires_in"}  # fmt: skip
    assert pair["token_type"] == "Bearer" and pair["expires_in"] == 900
    header = jwt.get_unverified_header(pair["access_token"])
    assert header["alg"] == container_of(client).config().auth.algorithm
    assert header["typ"] == "JWT" and header["kid"]

    resp = await client.get("/me", headers=bearer(pair["access_token"]))
    assert resp.status == 200
    me = await resp.json()
    assert me == {**user, "groups": []}

    resp = await client.post("/refresh", json={"refresh_token": pair["refresh_token"]})
    assert resp.status == 200
    rotated = await resp.json()

    resp = await client.post("/me/password", headers=bearer(rotated["access_token"]),
                             json={"old_password": PASSWORD, "new_password": "brand new secret"})  # fmt: skip
    assert resp.status == 204
    resp = await client.post("/refresh", json={"refresh_token": rotated["refresh_token"]})
    await assert_problem(resp, 401, "invalid_refresh_token")
    resp = await client.post("/login", json={"email": "alice@example.com", "password": PASSWORD})
    await assert_problem(resp, 401, "invalid_credentials")
    resp = await client.post("/login", json={"email": "alice@example.com",
                                             "password": "brand new secret"})  # fmt: skip
    assert resp.status == 200


async def test_twenty_concurrent_refreshes_exactly_one_succeeds(client: TestClient) -> None:
    pair = await register_and_login(client)
    responses = await asyncio.gather(
        *(client.post("/refresh", json={"refresh_token": pair["refresh_token"]})
          for _ in range(20))
    )  # fmt: skip
    statuses = sorted(r.status for r in responses)
    assert statuses == [200] + [401] * 19


async def test_reuse_kills_the_newest_token_of_the_family(client: TestClient) -> None:
    pair = await register_and_login(client)
    resp = await client.post("/refresh", json={"refresh_token": pair["refresh_token"]})
    newest = (await resp.json())["refresh_token"]
    resp = await client.post("/refresh", json={"refresh_token": pair["refresh_token"]})
    await assert_problem(resp, 401, "invalid_refresh_token")
    resp = await client.post("/refresh", json={"refresh_token": newest})
    await assert_problem(resp, 401, "invalid_refresh_token")


async def test_logout_ends_the_session(client: TestClient) -> None:
    pair = await register_and_login(client)
    resp = await client.post("/logout", json={"refresh_token": pair["refresh_token"]})
    assert resp.status == 204
    resp = await client.post("/refresh", json={"refresh_token": pair["refresh_token"]})
    await assert_problem(resp, 401, "invalid_refresh_token")
    resp = await client.post("/logout", json={"refresh_token": "never-issued"})
    assert resp.status == 204


async def test_login_errors_are_identical_for_unknown_email_and_wrong_password(
    client: TestClient,
) -> None:
    await register_and_login(client)
    wrong = await client.post("/login", json={"email": "alice@example.com", "password": "nopenope"})
    unknown = await client.post("/login", json={"email": "zed@example.com", "password": "nopenope"})
    assert await assert_problem(wrong, 401, "invalid_credentials") == await assert_problem(
        unknown, 401, "invalid_credentials"
    )


async def test_throttled_login_gets_429_with_retry_after(client: TestClient) -> None:
    await register_and_login(client)
    for _ in range(5):
        resp = await client.post(
            "/login", json={"email": "alice@example.com", "password": "bad-pass"}
        )
        assert resp.status == 401
    resp = await client.post("/login", json={"email": "alice@example.com", "password": PASSWORD})
    await assert_problem(resp, 429, "rate_limited")
    assert 0 < int(resp.headers["Retry-After"]) <= 900


async def test_forwarded_for_counts_only_behind_a_trusted_proxy(make_client: MakeClient) -> None:
    client = await make_client({"AUTHSVC_SERVER__TRUSTED_PROXIES": "127.0.0.1"})
    await register_and_login(client)
    for _ in range(5):
        await client.post("/login", json={"email": "alice@example.com", "password": "bad-pass"},
                          headers={"X-Forwarded-For": "203.0.113.9"})  # fmt: skip
    resp = await client.post("/login", json={"email": "alice@example.com", "password": PASSWORD},
                             headers={"X-Forwarded-For": "203.0.113.9"})  # fmt: skip
    assert resp.status == 429
    resp = await client.post("/login", json={"email": "alice@example.com", "password": PASSWORD},
                             headers={"X-Forwarded-For": "198.51.100.7"})  # fmt: skip
    assert resp.status == 200


async def test_forwarded_for_from_an_untrusted_peer_is_ignored(client: TestClient) -> None:
    await register_and_login(client)
    for i in range(5):  # a client spoofing a new address each time is still one peer
        await client.post("/login", json={"email": "alice@example.com", "password": "bad-pass"},
                          headers={"X-Forwarded-For": f"203.0.113.{i}"})  # fmt: skip
    resp = await client.post("/login", json={"email": "alice@example.com", "password": PASSWORD},
                             headers={"X-Forwarded-For": "198.51.100.7"})  # fmt: skip
    assert resp.status == 429


# --- bad input: 4xx problem+json and no state change ------------------------------------


async def _user_count(client: TestClient) -> int:
    storage = container_of(client).storage()
    async with storage.begin() as uow:
        return len(await uow.users.list_page(None, None, 1000))


@pytest.mark.parametrize(
    ("data", "headers", "status", "code"),
    [
        (b"not json", {"Content-Type": "application/json"}, 400, "malformed_body"),
        (b'{"email": "a@b.co"', {"Content-Type": "application/json"}, 400, "malformed_body"),
        (b'["a@b.co", "password"]', {"Content-Type": "application/json"}, 400, "malformed_body"),
        (b'"text"', {"Content-Type": "application/json"}, 400, "malformed_body"),
        (b"\xff\xfe", {"Content-Type": "application/json"}, 400, "malformed_body"),
        (b'{"email": "a@example.com", "password": "long enough"}', {"Content-Type": "text/plain"},
         400, "malformed_body"),
        (b'{"email": "a@example.com"}', {"Content-Type": "application/json"}, 422,
         "validation_error"),
        (b'{"email": 5, "password": "long enough"}', {"Content-Type": "application/json"}, 422,
         "validation_error"),
        (b'{"email": "a@example.com", "password": null}', {"Content-Type": "application/json"},
         422, "validation_error"),
        (b'{"email": "a@example.com", "password": ["x"]}', {"Content-Type": "application/json"},
         422, "validation_error"),
        (b'{"email": "nope", "password": "long enough"}', {"Content-Type": "application/json"},
         422, "validation_error"),
    ],
)  # fmt: skip
async def test_register_bad_bodies(
    client: TestClient, data: bytes, headers: dict[str, str], status: int, code: str
) -> None:
    resp = await client.post("/register", data=data, headers=headers)
    await assert_problem(resp, status, code)
    assert await _user_count(client) == 0


async def test_validation_error_names_the_field(client: TestClient) -> None:
    resp = await client.post("/register", json={"email": "a@example.com", "password": 12345678})
    body = await assert_problem(resp, 422, "validation_error")
    assert body["errors"][0]["field"] == "password"
    resp = await client.post("/register", json={"email": "a@example.com", "password": "x" * 73})
    body = await assert_problem(resp, 422, "validation_error")
    assert "72 bytes" in body["errors"][0]["message"]


async def test_oversized_body_is_413(client: TestClient) -> None:
    big = json.dumps({"email": "a@example.com", "password": "x" * 70_000})
    resp = await client.post("/register", data=big, headers={"Content-Type": "application/json"})
    await assert_problem(resp, 413, "body_too_large")
    assert await _user_count(client) == 0


async def test_bad_refresh_bodies_keep_the_token_alive(client: TestClient) -> None:
    pair = await register_and_login(client)
    resp = await client.post("/refresh", json={"refresh_token": 42})
    await assert_problem(resp, 422, "validation_error")
    resp = await client.post("/refresh", data=b"{", headers={"Content-Type": "application/json"})
    await assert_problem(resp, 400, "malformed_body")
    resp = await client.post("/refresh", json={"refresh_token": pair["refresh_token"]})
    assert resp.status == 200


async def test_unknown_route_and_method_are_problems(client: TestClient) -> None:
    await assert_problem(await client.get("/nope"), 404, "not_found")
    resp = await client.delete("/login")
    await assert_problem(resp, 405, "method_not_allowed")
    assert "POST" in resp.headers["Allow"]


# --- bearer verification: RFC 8725 attacks → 401 invalid_token ---------------------------


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _forge(header: dict[str, Any], claims: dict[str, Any], signature: bytes = b"") -> str:
    return ".".join([_b64(json.dumps(header).encode()), _b64(json.dumps(claims).encode()),
                     _b64(signature)])  # fmt: skip


async def _token_parts(client: TestClient) -> tuple[str, dict[str, Any], dict[str, Any]]:
    pair = await register_and_login(client)
    token = pair["access_token"]
    claims = jwt.decode(token, options={"verify_signature": False})
    return token, jwt.get_unverified_header(token), claims


def _rsa_public_pem(client: TestClient) -> bytes | None:
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    for key in container_of(client).signer().jwks()["keys"]:
        if key["kty"] == "RSA":
            public = jwt.PyJWK(key).key
            return public.public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)  # type: ignore[no-any-return]
    return None


async def test_jwt_attacks_are_rejected(client: TestClient) -> None:
    token, header, claims = await _token_parts(client)
    head, payload, sig = token.split(".")
    flipped = sig[:-4] + ("AAAA" if sig[-4:] != "AAAA" else "BBBB")
    no_kid = {k: v for k, v in header.items() if k != "kid"}
    attacks = {
        "alg none": _forge({"alg": "none", "typ": "JWT", "kid": header["kid"]}, claims),
        "alg None": _forge({"alg": "None", "typ": "JWT", "kid": header["kid"]}, claims),
        "wrong kid": f"{_b64(json.dumps({**header, 'kid': 'not-a-kid'}).encode())}.{payload}.{sig}",
        "missing kid": f"{_b64(json.dumps(no_kid).encode())}.{payload}.{sig}",
        "tampered payload": f"{head}.{_b64(json.dumps({**claims, 'role': 'superadmin'}).encode())}"
        f".{sig}",
        "tampered signature": f"{head}.{payload}.{flipped}",
        "garbage": "not.a.jwt",
    }
    pem = _rsa_public_pem(client)
    if pem is not None:
        attacks["HS256 with the public key"] = _hs256(claims, pem, header["kid"])
    for name, forged in attacks.items():
        resp = await client.get("/me", headers={"Authorization": f"Bearer {forged}"})
        await assert_problem(resp, 401, "invalid_token")
        assert resp.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"', name
    for headers in ({}, {"Authorization": "Basic YTpi"}, {"Authorization": "Bearer "}):
        resp = await client.get("/me", headers=headers)
        await assert_problem(resp, 401, "invalid_token")


def _hs256(claims: dict[str, Any], secret: bytes, kid: str) -> str:
    """An HS256 token keyed with the RSA public key (hand-made: PyJWT refuses PEM secrets)."""
    import hashlib
    import hmac

    signing_input = ".".join([_b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": kid}).encode()),
                              _b64(json.dumps(claims).encode())])  # fmt: skip
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{_b64(mac)}"


@pytest.mark.parametrize(
    ("env", "reason"),
    [
        ({"AUTHSVC_AUTH__ISSUER": "https://other.example"}, "wrong iss"),
        ({"AUTHSVC_AUTH__AUDIENCE": "someone-else"}, "wrong aud"),
    ],
)
async def test_tokens_for_another_issuer_or_audience_are_rejected(
    make_client: MakeClient, env: dict[str, str], reason: str
) -> None:
    issuing = await make_client()
    pair = await register_and_login(issuing)
    # Same key dir and database file, different iss/aud expectation.
    verifying = await make_client(env)
    await register_and_login(verifying, "bob@example.com")
    resp = await verifying.get("/me", headers=bearer(pair["access_token"]))
    await assert_problem(resp, 401, "invalid_token")


async def test_expired_token_is_rejected(make_client: MakeClient) -> None:
    client = await make_client({"AUTHSVC_AUTH__ACCESS_TOKEN_TTL": "1", "AUTHSVC_AUTH__LEEWAY": "0"})
    pair = await register_and_login(client)
    await asyncio.sleep(2.1)
    resp = await client.get("/me", headers=bearer(pair["access_token"]))
    await assert_problem(resp, 401, "invalid_token")


# --- keys and discovery -----------------------------------------------------------------


async def test_key_files_are_private(client: TestClient) -> None:
    config = container_of(client).config()
    if key_store_of(config) == "database":
        pytest.skip(
            "the keys are in the database here (tests/unit/adapters/crypto/test_db_keystore.py)"
        )
    key_dir = Path(config.auth.key_dir).expanduser()
    assert stat.S_IMODE(key_dir.stat().st_mode) == 0o700
    files = [p for p in key_dir.iterdir() if p.is_file()]
    assert files
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


async def test_token_verifies_with_pyjwkclient_against_the_jwks(make_client: MakeClient) -> None:
    # PyJWT's PyJWKClient knows RSA JWKs; AKP (ML-DSA) keys are checked with dilithium-py in
    # tests/unit/adapters/crypto/test_mldsa_interop.py.
    client = await make_client({"AUTHSVC_AUTH__ALGORITHM": "RS256"})
    pair = await register_and_login(client)
    url = str(client.make_url("/.well-known/jwks.json"))
    cfg = container_of(client).config().auth

    def verify() -> dict[str, Any]:
        jwks_client = jwt.PyJWKClient(url)
        key = jwks_client.get_signing_key_from_jwt(pair["access_token"])
        return jwt.decode(pair["access_token"], key.key, algorithms=["RS256"],
                          audience=cfg.audience, issuer=cfg.issuer)  # fmt: skip

    claims = await asyncio.to_thread(verify)
    assert claims["email"] == "alice@example.com"


async def test_discovery_document(client: TestClient) -> None:
    resp = await client.get("/.well-known/openid-configuration")
    assert resp.status == 200
    doc = await resp.json()
    assert doc["issuer"] == "http://localhost:8080"
    assert doc["jwks_uri"] == "http://localhost:8080/.well-known/jwks.json"
    alg = container_of(client).config().auth.algorithm
    assert alg in doc["id_token_signing_alg_values_supported"]
    # The same endpoints as the RFC 8414 metadata (docs/reference/oauth-and-oidc.md).
    oauth = await (await client.get("/.well-known/oauth-authorization-server")).json()
    assert {k: v for k, v in doc.items() if k in oauth} == oauth


async def test_openapi_describes_exactly_the_routes(client: TestClient) -> None:
    resp = await client.get("/openapi.json")
    doc = await resp.json()
    assert doc["openapi"].startswith("3.1")
    documented = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    pages = {(p["method"], p["path"]) for p in doc["x-authsvc-pages"]}
    routed = {
        (r.method, r.resource.canonical)
        for r in client.app.router.routes()
        if r.method != "HEAD" and r.resource is not None
    }
    assert documented | pages == routed and not documented & pages
    #  Pages are for browsers (docs/reference/oauth-and-oidc.md): the hosted pages and the front
    # channel, the federated login's start and callback, and the service's address (to a page).
    assert all(p.startswith(("/ui/", "/federation/")) or p in ("/oauth/authorize",
               "/oauth/logout", "/") for _, p in pages)  # fmt: skip
    assert {("GET", "/oauth/userinfo"), ("GET", "/.well-known/openid-configuration")} <= documented
