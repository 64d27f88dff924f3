"""``/oauth/authorize`` over HTTP (docs/reference/oauth-and-oidc.md; research §6 OP-01, OP-04,
OP-06, OP-08, OP-09, OP-11, OP-14, OP-15, OP-16, OP-17, OP-18, OP-21, OP-25, OP-29)."""

from __future__ import annotations

import asyncio
from urllib.parse import urlencode

import pytest
from aiohttp.test_utils import TestClient

from tests.e2e.helpers import ONE_PER_BACKEND
from tests.e2e.oidc_helpers import (
    ISSUER,
    REDIRECT,
    auth_params,
    authorize,
    code_via_browser,
    exchange,
    full_flow,
    pkce,
    query_of,
    register_client,
    register_user,
    verify_id_token,
)


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


async def _error(client: TestClient, params: dict[str, str]) -> dict[str, str]:
    resp = await authorize(client, params)
    assert resp.status == 303, await resp.text()
    location = resp.headers["Location"]
    assert location.startswith(REDIRECT), location
    query = query_of(location)
    assert query["iss"] == ISSUER and "code" not in query  # OP-29
    return query


async def test_discovery(client: TestClient) -> None:
    """OP-01: the endpoints, S256 only, the RFC 9207 flag, code only, unique kids."""
    doc = await (await client.get("/.well-known/openid-configuration")).json()
    assert doc["issuer"] == ISSUER
    assert doc["authorization_endpoint"] == ISSUER + "/oauth/authorize"
    assert doc["userinfo_endpoint"] == ISSUER + "/oauth/userinfo"
    assert doc["end_session_endpoint"] == ISSUER + "/oauth/logout"
    assert doc["code_challenge_methods_supported"] == ["S256"]
    assert doc["authorization_response_iss_parameter_supported"] is True
    assert doc["response_types_supported"] == ["code"]
    assert doc["id_token_signing_alg_values_supported"][0] == "RS256"
    assert doc["request_parameter_supported"] is False
    assert "address" not in doc["scopes_supported"]
    keys = (await (await client.get("/.well-known/jwks.json")).json())["keys"]
    assert len({k["kid"] for k in keys}) == len(keys)


async def test_bad_client_or_redirect_uri_gets_a_page_never_a_redirect(client: TestClient) -> None:
    """OP-09: unregistered redirect_uri (also + ?x=1, a trailing slash, another case), a
    missing one, an unknown client_id → 400 HTML, no Location."""
    app = await register_client(client)
    _, challenge = pkce()
    for change in (
        {"redirect_uri": "https://evil.example/cb"},
        {"redirect_uri": REDIRECT + "?x=1"},
        {"redirect_uri": REDIRECT + "/"},
        {"redirect_uri": REDIRECT.upper()},
        {"redirect_uri": None},
        {"client_id": "0" * 32},
        {"client_id": None},
    ):
        resp = await authorize(client, auth_params(app, challenge, **change))  # type: ignore[arg-type]
        assert resp.status == 400, change
        assert "Location" not in resp.headers
        assert resp.headers["Content-Type"].startswith("text/html")
        assert resp.headers["X-Frame-Options"] == "DENY"


async def test_errors_go_back_with_state_and_iss(client: TestClient) -> None:
    """OP-06 (repeated parameter), OP-08 (response_type), OP-11 (PKCE), OP-17 (bad max_age),
    OP-21 (request objects; a ``request_uri`` that is no pushed request is the error page:
    tests/e2e/http/test_par_http.py), OP-14 (prompt=none with another value), invalid_scope."""
    app = await register_client(client)
    _, challenge = pkce()
    base = auth_params(app, challenge)
    cases = [
        ({"response_type": None}, "invalid_request"),
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"response_type": "code id_token"}, "unsupported_response_type"),
        ({"code_challenge": None}, "invalid_request"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"code_challenge_method": None}, "invalid_request"),
        ({"code_challenge": "short"}, "invalid_request"),
        ({"max_age": "-1"}, "invalid_request"),
        ({"max_age": "abc"}, "invalid_request"),
        ({"prompt": "none login"}, "invalid_request"),
        ({"prompt": "bogus"}, "invalid_request"),
        ({"request": "eyJ"}, "request_not_supported"),
        ({"scope": "openid admin"}, "invalid_scope"),
        ({"id_token_hint": "not.a.token"}, "invalid_request"),
    ]
    for change, error in cases:
        query = await _error(client, auth_params(app, challenge, **change))  # type: ignore[arg-type]
        assert query["error"] == error, (change, query)
        assert query["state"] == "st-1" and "\n" not in query["error_description"]
    repeated = urlencode([*base.items(), ("scope", "openid")])
    resp = await client.get("/oauth/authorize?" + repeated, allow_redirects=False)
    assert query_of(resp.headers["Location"])["error"] == "invalid_request"


async def test_post_unknown_parameters_and_ignored_scopes(client: TestClient) -> None:
    """OP-04: POST works; OP-06: an unknown parameter is ignored; OP-07: reversed scope order;
    OP-23: address and phone are ignored; OP-19: display and ui_locales are accepted."""
    await register_user(client)
    app = await register_client(client, skip_consent=True)
    tokens, _ = await full_flow(client, app, scope="email openid address phone",
                                extra_param="1", display="page", ui_locales="se")  # fmt: skip
    assert tokens["scope"] == "email openid"
    _, challenge = pkce()
    resp = await client.post("/oauth/authorize", data=auth_params(app, challenge),
                             allow_redirects=False)  # fmt: skip
    assert resp.status == 303 and "code=" in resp.headers["Location"]


async def test_prompt_none(client: TestClient) -> None:
    """OP-14: prompt=none without a session → login_required; with a session but no consent →
    consent_required. OP-15: with both → a code, same sub and auth_time, no page."""
    await register_user(client)
    app = await register_client(client)
    verifier, challenge = pkce()
    query = await _error(client, auth_params(app, challenge, prompt="none"))
    assert query["error"] == "login_required"
    other = await register_client(client)
    tokens, _ = await full_flow(client, other)
    first = await verify_id_token(client, tokens["id_token"], other.id)
    query = await _error(client, auth_params(app, challenge, prompt="none"))
    assert query["error"] == "consent_required"
    resp = await authorize(client, auth_params(other, challenge, prompt="none"))
    code = query_of(resp.headers["Location"])["code"]
    again = await (await exchange(client, other, code, verifier)).json()
    claims = await verify_id_token(client, again["id_token"], other.id)
    assert claims["sub"] == first["sub"] and claims["auth_time"] == first["auth_time"]


async def test_prompt_login_and_max_age_force_a_new_login(client: TestClient) -> None:
    """OP-16: prompt=login shows the login page and the new auth_time is later; OP-17:
    max_age=1 after 2 s → login; max_age=10000 → silent, same auth_time; max_age=0 → login."""
    await register_user(client)
    app = await register_client(client, skip_consent=True)
    tokens, _ = await full_flow(client, app)
    first = await verify_id_token(client, tokens["id_token"], app.id)
    _, challenge = pkce()
    resp = await authorize(client, auth_params(app, challenge, max_age="10000"))
    assert resp.headers["Location"].startswith(REDIRECT)
    await asyncio.sleep(2.1)
    for change in ({"prompt": "login"}, {"max_age": "1"}, {"max_age": "0"}):
        resp = await authorize(client, auth_params(app, challenge, **change))
        assert resp.headers["Location"].startswith("/ui/login?"), change
    tokens, _ = await full_flow(client, app, prompt="login")
    later = await verify_id_token(client, tokens["id_token"], app.id)
    assert later["auth_time"] > first["auth_time"]


async def test_id_token_hint(client: TestClient) -> None:
    """OP-18: a hint of the current user + prompt=none → silent; a hint of another user +
    prompt=none → login_required."""
    await register_user(client)
    await register_user(client, "bob@example.com")
    app = await register_client(client, skip_consent=True)
    tokens, _ = await full_flow(client, app)
    hint = tokens["id_token"]
    _, challenge = pkce()
    resp = await authorize(client, auth_params(app, challenge, prompt="none", id_token_hint=hint))
    assert "code" in query_of(resp.headers["Location"])
    client.session.cookie_jar.clear()
    await code_via_browser(client, app, auth_params(app, challenge), "bob@example.com")
    query = await _error(client, auth_params(app, challenge, prompt="none", id_token_hint=hint))
    assert query["error"] == "login_required"


async def test_consent(client: TestClient) -> None:
    """OP-25: consent on first use; Deny → access_denied with state and iss; Allow → the same
    request is silent; a new scope or prompt=consent asks again; skip_consent never asks."""
    await register_user(client)
    app = await register_client(client)
    _, challenge = pkce()
    resp = await authorize(client, auth_params(app, challenge))
    assert resp.headers["Location"].startswith("/ui/login?")
    from tests.e2e.oidc_helpers import consent, sign_in

    return_to = query_of(resp.headers["Location"])["return_to"]
    location = await sign_in(client, return_to)
    resp = await client.get(location, allow_redirects=False)
    assert resp.headers["Location"].startswith("/ui/consent?")
    denied = await consent(client, resp.headers["Location"], "deny")
    assert query_of(denied)["error"] == "access_denied"
    assert query_of(denied)["iss"] == ISSUER and query_of(denied)["state"] == "st-1"
    resp = await authorize(client, auth_params(app, challenge))
    allowed = await consent(client, resp.headers["Location"], "allow")
    assert "code" in query_of(allowed)
    resp = await authorize(client, auth_params(app, challenge))
    assert resp.headers["Location"].startswith(REDIRECT)
    for change in ({"scope": "openid email"}, {"prompt": "consent"}):
        resp = await authorize(client, auth_params(app, challenge, **change))
        assert resp.headers["Location"].startswith("/ui/consent?"), change
    first_party = await register_client(client, skip_consent=True)
    resp = await authorize(client, auth_params(first_party, challenge))
    assert resp.headers["Location"].startswith(REDIRECT)
