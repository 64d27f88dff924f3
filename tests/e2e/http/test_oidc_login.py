"""The hosted login page over HTTP, on SQLite and PostgreSQL (docs/reference/oauth-and-oidc.md;
research §6 OP-20, OP-26, OP-27): password + TOTP, the JSON API's throttle and enumeration promise
kept, expired interactions answered by pages, never a 500."""

from __future__ import annotations

import asyncio
import time
from urllib.parse import urlencode

import pyotp
import pytest
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient

from application.oauth.authorize import parse_authorize
from tests.e2e.helpers import ONE_PER_BACKEND, PASSWORD, MakeClient, bearer, container_of
from tests.e2e.oidc_helpers import (
    ORIGIN,
    REDIRECT,
    auth_params,
    authorize,
    csrf_of,
    exchange,
    pkce,
    query_of,
    register_client,
    register_user,
    sign_in,
    verify_id_token,
)

ALICE = "alice@example.com"


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


async def _enrol_totp(client: TestClient) -> str:
    """Alice turns TOTP on through the JSON API; returns the secret."""
    resp = await client.post("/login", json={"email": ALICE, "password": PASSWORD})
    access = (await resp.json())["access_token"]
    resp = await client.post("/me/mfa/totp", json={"password": PASSWORD}, headers=bearer(access))
    secret = str((await resp.json())["secret"])
    code = pyotp.TOTP(secret).now()
    resp = await client.post("/me/mfa/totp/confirm", json={"code": code}, headers=bearer(access))
    assert resp.status == 200, await resp.text()
    return secret


async def _post_code(client: TestClient, mfa_location: str, code: str) -> ClientResponse:
    resp = await client.get(mfa_location)
    assert resp.status == 200 and 'name="code"' in await resp.text()
    return_to = query_of(mfa_location)["return_to"]
    form = {"code": code, "csrf_token": csrf_of(client), "return_to": return_to}
    return await client.post("/ui/login/mfa", data=form, headers=ORIGIN, allow_redirects=False)


async def test_password_and_totp_give_mfa_amr_and_acr_2(client: TestClient) -> None:
    """OP-20 / OP-27: password then a TOTP code on the hosted pages → the ID token has amr
    ["pwd", "otp", "mfa"] and acr "2" (acr_values=2 asked); a wrong code → 401 the same page."""
    await register_user(client)
    secret = await _enrol_totp(client)
    app = await register_client(client, skip_consent=True)
    verifier, challenge = pkce()
    resp = await authorize(client, auth_params(app, challenge, acr_values="2"))
    return_to = query_of(resp.headers["Location"])["return_to"]
    mfa_location = await sign_in(client, return_to)
    assert mfa_location.startswith("/ui/login/mfa?")
    resp = await _post_code(client, mfa_location, "abcdef")
    assert resp.status == 401
    later = pyotp.TOTP(secret).at(time.time() + 30)  # the next step: not the enrolment's code
    resp = await _post_code(client, mfa_location, later)
    assert resp.status == 303, await resp.text()
    assert resp.headers["Location"] == return_to
    resp = await client.get(return_to, allow_redirects=False)
    callback = query_of(resp.headers["Location"])
    tokens = await (await exchange(client, app, callback["code"], verifier)).json()
    claims = await verify_id_token(client, tokens["id_token"], app.id)
    assert claims["amr"] == ["pwd", "otp", "mfa"] and claims["acr"] == "2"


async def _login_form(client: TestClient, email: str, password: str) -> tuple[int, str]:
    await client.get("/ui/login", params={"return_to": "/ui/signed-in"})
    form = {"email": email, "password": password, "csrf_token": csrf_of(client),
            "return_to": "/ui/signed-in"}  # fmt: skip
    resp = await client.post("/ui/login", data=form, headers=ORIGIN, allow_redirects=False)
    return resp.status, (await resp.text()).replace(email, "EMAIL")


async def test_login_page_keeps_the_throttle_and_enumeration_promise(
    make_client: MakeClient,
) -> None:
    """The login page calls the JSON API's use case: an unknown email and a wrong password get
    the same status and page (the echoed email aside); after auth.login_max_failures failures
    the page answers 429 with Retry-After, even for the right password, and an unknown email
    is throttled alike."""
    client = await make_client({"AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "3"})
    await register_user(client)
    wrong = await _login_form(client, ALICE, "not the password")
    unknown = await _login_form(client, "nobody@example.com", "not the password")
    assert wrong[0] == unknown[0] == 401
    assert wrong[1] == unknown[1]
    for _ in range(2):
        assert (await _login_form(client, ALICE, "not the password"))[0] == 401
    status, text = await _login_form(client, ALICE, PASSWORD)
    assert status == 429 and "Too many failed attempts" in text
    for _ in range(3):
        await _login_form(client, "nobody@example.com", "x")
    form = {"email": "nobody@example.com", "password": "x", "csrf_token": csrf_of(client),
            "return_to": "/ui/signed-in"}  # fmt: skip
    resp = await client.post("/ui/login", data=form, headers=ORIGIN, allow_redirects=False)
    assert resp.status == 429 and int(resp.headers["Retry-After"]) >= 1


async def test_expired_interactions_get_pages_not_errors(make_client: MakeClient) -> None:
    """OP-26: an expired second step (auth.mfa_token_ttl = 1 s) → the code page again with its
    message (401); a consent posted after the hosted session ended → back to the login page;
    a forced-login marker older than oidc.interaction_ttl → the login page again (the request
    starts over); a consent page for a client that is gone → a 400 error page. Never a 500."""
    client = await make_client({"AUTHSVC_AUTH__MFA_TOKEN_TTL": "1"})
    await register_user(client)
    secret = await _enrol_totp(client)
    app = await register_client(client)
    _, challenge = pkce()
    resp = await authorize(client, auth_params(app, challenge))
    return_to = query_of(resp.headers["Location"])["return_to"]
    mfa_location = await sign_in(client, return_to)
    await asyncio.sleep(1.5)
    resp = await _post_code(client, mfa_location, pyotp.TOTP(secret).at(time.time() + 30))
    assert resp.status == 401
    assert "The code is wrong or expired" in await resp.text()

    # the consent form posts the same authorize request; no hosted session was opened
    form = {"decision": "allow", "csrf_token": csrf_of(client), "return_to": return_to}
    resp = await client.post("/ui/consent", data=form, headers=ORIGIN, allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"].startswith("/ui/login?")

    authorize_uc = container_of(client).authorize()
    forced = auth_params(app, challenge, prompt="login")
    request = parse_authorize(list(forced.items()), app.record)
    stale = authorize_uc._login_marker(request, int(time.time()) - 7200)
    params = {**forced, "authsvc_login_after": stale}
    resp = await authorize(client, params)
    assert resp.status == 303 and resp.headers["Location"].startswith("/ui/login?")
    assert stale not in query_of(resp.headers["Location"])["return_to"]

    gone = "/oauth/authorize?" + urlencode({**auth_params(app, challenge), "client_id": "f" * 32})
    resp = await client.get("/ui/consent", params={"return_to": gone})
    assert resp.status == 400 and "not valid" in await resp.text()
    form = {"decision": "allow", "csrf_token": csrf_of(client), "return_to": gone}
    resp = await client.post("/ui/consent", data=form, headers=ORIGIN, allow_redirects=False)
    assert resp.status == 400
    assert REDIRECT not in resp.headers.get("Location", "")
