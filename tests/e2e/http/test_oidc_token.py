"""The code flow end to end over HTTP (docs/reference/oauth-and-oidc.md; research §6 OP-02, OP-03,
OP-05, OP-11, OP-12, OP-13, OP-24): the hosted login by a cookie-jar client, the token endpoint, ID
tokens checked with PyJWT against the JWKS."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient

from tests.e2e.helpers import ONE_PER_BACKEND, bearer
from tests.e2e.oidc_helpers import (
    ISSUER,
    REDIRECT,
    auth_params,
    code_via_browser,
    exchange,
    full_flow,
    pkce,
    refresh,
    register_client,
    register_user,
    verify_id_token,
)


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


async def test_happy_flow_confidential_basic(client: TestClient) -> None:
    """OP-02: callback has code, state and iss; no-store; RS256 ID token with kid valid against
    the JWKS, with iss/aud/azp/exp/iat/nonce/sub/auth_time/sid/amr/acr."""
    user_id = await register_user(client)
    app = await register_client(client)
    tokens, callback = await full_flow(client, app)
    assert callback["state"] == "st-1" and callback["iss"] == ISSUER
    claims = await verify_id_token(client, tokens["id_token"], app.id)
    assert claims["sub"] == user_id and claims["azp"] == app.id and claims["nonce"] == "n-1"
    assert claims["exp"] - claims["iat"] == 300
    assert claims["amr"] == ["pwd"] and claims["acr"] == "1" and isinstance(claims["sid"], str)
    assert tokens["token_type"] == "Bearer" and tokens["scope"] == "openid"
    assert "refresh_token" not in tokens  # OP-24: no offline_access, no refresh token


async def test_client_secret_post_and_public_clients(client: TestClient) -> None:
    """OP-03: the same flow with client_secret_post and with a public client (none); OP-05: no
    nonce → no nonce claim."""
    await register_user(client)
    post = await register_client(client, method="client_secret_post")
    tokens, _ = await full_flow(client, post)
    assert (await verify_id_token(client, tokens["id_token"], post.id))["nonce"] == "n-1"
    public = await register_client(client, public=True)
    tokens, _ = await full_flow(client, public, nonce=None)  # type: ignore[arg-type]
    assert "nonce" not in await verify_id_token(client, tokens["id_token"], public.id)


async def test_wrong_or_missing_verifier_and_binding(client: TestClient) -> None:
    """OP-11: wrong or missing code_verifier → invalid_grant; OP-13: another client's code,
    another redirect_uri → invalid_grant, and the code still works for its own request."""
    await register_user(client)
    app = await register_client(client)
    other = await register_client(client, skip_consent=True)
    verifier, challenge = pkce()
    callback = await code_via_browser(client, app, auth_params(app, challenge))
    code = callback["code"]
    for resp in (
        await exchange(client, app, code, "x" * 43),
        await exchange(client, app, code, None),
        await exchange(client, other, code, verifier),
        await exchange(client, app, code, verifier, "https://app.example.com/other"),
    ):
        assert resp.status == 400
        assert (await resp.json())["error"] == "invalid_grant"
    resp = await exchange(client, app, code, verifier)
    assert resp.status == 200, await resp.text()


async def test_code_reuse_revokes_the_family(client: TestClient) -> None:
    """OP-12: a second exchange → invalid_grant, and the first access token is then refused at
    userinfo and its refresh token at the token endpoint; oauth.code_reused is audited."""
    await register_user(client)
    app = await register_client(client)
    verifier, challenge = pkce()
    params = auth_params(app, challenge, scope="openid offline_access")
    callback = await code_via_browser(client, app, params)
    first = await exchange(client, app, callback["code"], verifier)
    tokens = await first.json()
    resp = await client.get("/oauth/userinfo", headers=bearer(tokens["access_token"]))
    assert resp.status == 200
    again = await exchange(client, app, callback["code"], verifier)
    assert again.status == 400 and (await again.json())["error"] == "invalid_grant"
    resp = await client.get("/oauth/userinfo", headers=bearer(tokens["access_token"]))
    assert resp.status == 401
    assert resp.headers["WWW-Authenticate"].startswith('Bearer error="invalid_token"')
    resp = await refresh(client, app, tokens["refresh_token"])
    assert resp.status == 400 and (await resp.json())["error"] == "invalid_grant"


async def test_refresh_rotates_keeps_claims_and_is_bound_to_the_client(
    client: TestClient,
) -> None:
    """OP-24: offline_access → a refresh token; the refreshed ID token keeps iss/sub/aud/azp/
    auth_time; another client cannot use it; a spent token reused revokes the family."""
    await register_user(client)
    app = await register_client(client, public=True)
    other = await register_client(client)
    tokens, _ = await full_flow(client, app, scope="openid offline_access")
    first = await verify_id_token(client, tokens["id_token"], app.id)
    resp = await refresh(client, other, tokens["refresh_token"])
    assert resp.status == 400 and (await resp.json())["error"] == "invalid_grant"
    resp = await refresh(client, app, tokens["refresh_token"])
    assert resp.status == 200, await resp.text()
    renewed = await resp.json()
    again = await verify_id_token(client, renewed["id_token"], app.id)
    for claim in ("iss", "sub", "aud", "azp", "auth_time"):
        assert again[claim] == first[claim]
    assert renewed["refresh_token"] != tokens["refresh_token"]
    resp = await refresh(client, app, tokens["refresh_token"])  # spent: reuse
    assert resp.status == 400
    resp = await refresh(client, app, renewed["refresh_token"])
    assert resp.status == 400  # the family is revoked


async def test_code_flow_refresh_token_is_refused_by_the_json_api(client: TestClient) -> None:
    """OP-24 (binding): a code-flow refresh token is no JSON-API refresh token, and the JSON
    API's access token is no userinfo token."""
    await register_user(client)
    app = await register_client(client)
    tokens, _ = await full_flow(client, app, scope="openid offline_access")
    resp = await client.post("/refresh", json={"refresh_token": tokens["refresh_token"]})
    assert resp.status == 401
    resp = await client.get("/me", headers=bearer(tokens["access_token"]))
    assert resp.status == 401
    assert REDIRECT
