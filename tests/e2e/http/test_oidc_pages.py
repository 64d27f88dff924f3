"""The hosted pages, userinfo and RP-initiated logout over HTTP (docs/reference/oauth-and-oidc.md;
research §6 OP-22, OP-23, OP-26, OP-28)."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient

from tests.e2e.helpers import ONE_PER_BACKEND, PASSWORD, bearer, register_and_login
from tests.e2e.oidc_helpers import (
    ORIGIN,
    auth_params,
    authorize,
    csrf_of,
    full_flow,
    pkce,
    query_of,
    register_client,
    register_user,
)


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


async def test_userinfo(client: TestClient) -> None:
    """OP-22: GET and POST with a Bearer header → sub; no token → 401 + WWW-Authenticate:
    Bearer; a JSON-API token → 401. OP-23: email → email + email_verified in userinfo, not in
    the ID token."""
    user_id = await register_user(client)
    app = await register_client(client, skip_consent=True)
    tokens, _ = await full_flow(client, app, scope="openid email profile")
    for method in ("GET", "POST"):
        resp = await client.request(
            method, "/oauth/userinfo", headers=bearer(tokens["access_token"])
        )
        assert resp.status == 200, await resp.text()
        body = await resp.json()
        assert body["sub"] == user_id and body["email"] == "alice@example.com"
        assert body["email_verified"] is False
    resp = await client.get("/oauth/userinfo")
    assert resp.status == 401 and resp.headers["WWW-Authenticate"].startswith("Bearer")
    pair = await client.post("/login", json={"email": "alice@example.com", "password": PASSWORD})
    resp = await client.get("/oauth/userinfo", headers=bearer((await pair.json())["access_token"]))
    assert resp.status == 401
    tokens, _ = await full_flow(client, app, scope="email")
    resp = await client.get("/oauth/userinfo", headers=bearer(tokens["access_token"]))
    assert resp.status == 403 and (await resp.json())["error"] == "insufficient_scope"


async def test_page_headers_csrf_and_escaping(client: TestClient) -> None:
    """OP-26: every page has frame-ancestors 'none', X-Frame-Options and no-store; a POST
    without the CSRF token or from another origin → 403; the login POST answers 303; the
    client name is escaped; the session cookie is HttpOnly and SameSite=Lax."""
    await register_user(client)
    app = await register_client(client, name="<script>alert(1)</script>")
    resp = await client.get("/ui/login")
    for name, value in (
        ("X-Frame-Options", "DENY"),
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "same-origin"),
    ):
        assert resp.headers[name] == value
    assert "frame-ancestors 'none'" in resp.headers["Content-Security-Policy"]
    html = await resp.text()
    assert 'name="email"' in html and 'name="password"' in html and 'name="csrf_token"' in html
    form = {"email": "alice@example.com", "password": PASSWORD}
    resp = await client.post("/ui/login", data=form, headers=ORIGIN, allow_redirects=False)
    assert resp.status == 403
    form["csrf_token"] = csrf_of(client)
    resp = await client.post(
        "/ui/login", data=form, headers={"Origin": "https://evil.example"}, allow_redirects=False
    )
    assert resp.status == 403
    resp = await client.post(
        "/ui/login",
        data={**form, "password": "wrong password"},
        headers=ORIGIN,
        allow_redirects=False,
    )
    assert resp.status == 401
    resp = await client.post(
        "/ui/login",
        data={**form, "return_to": "https://evil.example/"},
        headers=ORIGIN,
        allow_redirects=False,
    )
    assert resp.status == 303 and resp.headers["Location"] == "/ui/signed-in"
    cookie = resp.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/" in cookie
    _, challenge = pkce()
    resp = await authorize(client, auth_params(app, challenge))
    resp = await client.get(resp.headers["Location"])
    html = await resp.text()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html


async def test_secure_cookie_name_on_https_issuer(make_client) -> None:  # type: ignore[no-untyped-def]
    """OP-26: on an https issuer the cookie is __Host-authsvc_session, Secure."""
    client = await make_client({"AUTHSVC_AUTH__ISSUER": "https://id.example.com"})
    await register_and_login(client)
    await client.get("/ui/login")
    token = next(c.value for c in client.session.cookie_jar if c.key == "__Host-authsvc_csrf")
    form = {"email": "alice@example.com", "password": PASSWORD, "csrf_token": token}
    resp = await client.post(
        "/ui/login",
        data=form,
        allow_redirects=False,
        headers={"Origin": "https://id.example.com", "Cookie": f"__Host-authsvc_csrf={token}"},
    )
    assert resp.status == 303, await resp.text()
    cookie = resp.headers["Set-Cookie"]
    assert cookie.startswith("__Host-authsvc_session=") and "Secure" in cookie


async def test_rp_initiated_logout(client: TestClient) -> None:
    """OP-28: hint + registered URI + state → 303 with state, then prompt=none →
    login_required; an unregistered URI or no hint → the confirmation page, no redirect; a
    client_id other than the hint's → error."""
    await register_user(client)
    app = await register_client(client, skip_consent=True)
    tokens, _ = await full_flow(client, app)
    hint = tokens["id_token"]
    resp = await client.get("/oauth/logout", allow_redirects=False)
    assert resp.status == 200 and 'action="/ui/logout"' in await resp.text()
    resp = await client.get("/oauth/logout", params={
        "id_token_hint": hint, "post_logout_redirect_uri": "https://evil.example/bye"},
        allow_redirects=False)  # fmt: skip
    assert resp.status == 200 and "Location" not in resp.headers
    resp = await client.get("/oauth/logout", params={"id_token_hint": hint, "client_id": "0" * 32})
    assert resp.status == 400
    resp = await client.get("/oauth/logout", params={
        "id_token_hint": hint, "post_logout_redirect_uri": "https://app.example.com/bye",
        "state": "s9"}, allow_redirects=False)  # fmt: skip
    assert resp.status == 303
    assert resp.headers["Location"] == "https://app.example.com/bye?state=s9"
    _, challenge = pkce()
    resp = await authorize(client, auth_params(app, challenge, prompt="none"))
    assert query_of(resp.headers["Location"])["error"] == "login_required"


async def test_the_service_address_leads_to_the_account_page_then_the_login(
    client: TestClient,
) -> None:
    """``GET /`` is a page, not a JSON 404: 303 to /ui/account, which asks for a login."""
    resp = await client.get("/", allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"] == "/ui/account"
    assert resp.headers["X-Frame-Options"] == "DENY"
    account = await client.get("/ui/account", allow_redirects=False)
    assert account.status == 303 and account.headers["Location"].startswith("/ui/login")
