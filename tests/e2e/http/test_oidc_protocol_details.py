"""Smaller protocol rules of the OpenID Connect provider over HTTP
(docs/reference/oauth-and-oidc.md): ``response_mode``, the forced login bound to its request, the
``authsvc`` scope's claims in the ID token, discovery's ``scopes_supported`` and the JWKS's
``use``."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient

from application.oauth.interaction import LOGIN_AFTER
from tests.e2e.helpers import ONE_PER_BACKEND, MakeClient
from tests.e2e.oidc_helpers import (
    REDIRECT,
    auth_params,
    authorize,
    full_flow,
    pkce,
    query_of,
    refresh,
    register_client,
    register_user,
    sign_in,
    verify_id_token,
)


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


async def test_response_mode_other_than_query_is_invalid_request(client: TestClient) -> None:
    """fragment and form_post → invalid_request in the query (with state), never a code;
    query is served."""
    await register_user(client)
    app = await register_client(client, skip_consent=True)
    _, challenge = pkce()
    for mode in ("fragment", "form_post", "bogus"):
        resp = await authorize(client, auth_params(app, challenge, response_mode=mode))
        location = resp.headers["Location"]
        assert location.startswith(REDIRECT + "?") and "#" not in location, location
        query = query_of(location)
        assert query["error"] == "invalid_request" and query["state"] == "st-1", query
    resp = await authorize(client, auth_params(app, challenge, response_mode="query"))
    assert resp.headers["Location"].startswith("/ui/login?")


async def test_a_forced_login_marker_serves_only_its_own_request(client: TestClient) -> None:
    """A marker fetched with one prompt=login request (anyone can fetch one) does not satisfy
    another request of the same client, even after a login later than the marker: that one
    still goes to the login page. Its own request goes on after the login."""
    await register_user(client)
    app = await register_client(client, skip_consent=True)
    _, challenge = pkce()
    first = auth_params(app, challenge, prompt="login", state="mine")
    resp = await authorize(client, first)
    return_to = query_of(resp.headers["Location"])["return_to"]
    marker = query_of(return_to)[LOGIN_AFTER]
    location = await sign_in(client, return_to)  # a login after the marker's time
    other = auth_params(app, challenge, prompt="login", state="another", nonce="n-2")
    resp = await authorize(client, {**other, LOGIN_AFTER: marker})
    assert resp.headers["Location"].startswith("/ui/login?"), resp.headers["Location"]
    resp = await client.get(location, allow_redirects=False)
    assert query_of(resp.headers["Location"])["state"] == "mine"
    assert "code" in query_of(resp.headers["Location"])


async def test_authsvc_scope_claims_discovery_and_jwks(make_client: MakeClient) -> None:
    """The authsvc scope puts org_id, role and groups into the ID token (a refreshed one too),
    as at userinfo; discovery lists the authsvc scope; every JWK, ML-DSA included, says
    "use": "sig"."""
    client = await make_client({"AUTHSVC_AUTH__ALGORITHMS": "RS256,ML-DSA-65"})
    await register_user(client)
    app = await register_client(client, skip_consent=True, scopes=("authsvc",))
    tokens, _ = await full_flow(client, app, scope="openid authsvc offline_access")
    claims = await verify_id_token(client, tokens["id_token"], app.id)
    expected = {"org_id": "default", "role": "viewer", "groups": []}
    assert {k: claims.get(k) for k in expected} == expected
    resp = await refresh(client, app, tokens["refresh_token"])
    assert resp.status == 200, await resp.text()
    claims = await verify_id_token(client, (await resp.json())["id_token"], app.id)
    assert {k: claims.get(k) for k in expected} == expected
    tokens, _ = await full_flow(client, app, scope="openid")
    claims = await verify_id_token(client, tokens["id_token"], app.id)
    assert not set(expected) & set(claims)

    doc = await (await client.get("/.well-known/openid-configuration")).json()
    assert "authsvc" in doc["scopes_supported"]
    keys = (await (await client.get("/.well-known/jwks.json")).json())["keys"]
    assert {k["kty"] for k in keys} == {"RSA", "AKP"}
    assert all(k["use"] == "sig" for k in keys), keys
