"""Browsers on another origin (issue 22; ``server.cors_origins``): a preflight from an allowed
origin is answered with the methods and headers the API takes and never allows credentials;
its requests get ``Access-Control-Allow-Origin``; other origins, and every origin when the
setting is empty, get no CORS header."""

from __future__ import annotations

import pytest

from tests.e2e.helpers import PASSWORD, MakeClient, register_and_login

APP = "https://app.example.com"


@pytest.fixture
def deployment() -> tuple[str, str]:
    """SQLite is enough: CORS is the HTTP edge's."""
    return ("sqlite", "RS256")


async def test_an_allowed_origin_gets_preflights_and_headers(make_client: MakeClient) -> None:
    client = await make_client(
        {"AUTHSVC_SERVER__CORS_ORIGINS": f"{APP}, https://admin.example.com"}
    )
    resp = await client.options("/login/passkey", headers={
        "Origin": APP, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type, authorization"})  # fmt: skip
    assert resp.status == 200, await resp.text()
    assert resp.headers["Access-Control-Allow-Origin"] == APP
    assert "POST" in resp.headers["Access-Control-Allow-Methods"]
    allowed = resp.headers["Access-Control-Allow-Headers"].lower()
    assert "content-type" in allowed and "authorization" in allowed
    assert resp.headers.get("Access-Control-Allow-Credentials") != "true"
    await register_and_login(client)
    resp = await client.post("/login", json={"email": "alice@example.com", "password": PASSWORD},
                             headers={"Origin": APP})  # fmt: skip
    assert resp.status == 200
    assert resp.headers["Access-Control-Allow-Origin"] == APP
    resp = await client.post("/login", json={"email": "alice@example.com", "password": PASSWORD},
                             headers={"Origin": "https://evil.example.com"})  # fmt: skip
    assert "Access-Control-Allow-Origin" not in resp.headers


async def test_no_origin_is_allowed_by_default(make_client: MakeClient) -> None:
    client = await make_client()
    resp = await client.get("/.well-known/jwks.json", headers={"Origin": APP})
    assert resp.status == 200 and "Access-Control-Allow-Origin" not in resp.headers
