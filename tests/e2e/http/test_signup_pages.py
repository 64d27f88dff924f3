"""The sign-up page over HTTP (docs/guides/self-service.md; ADR 0042), on SQLite and PostgreSQL:
``/ui/register`` open and closed, its form errors (each changing nothing), CSRF, ``return_to``
kept and an unsafe one refused, signing in at once, and the verification path (real SMTP) whose
link signs in only the browser that signed up. Every outcome is checked afterwards over the JSON
API: ``POST /login`` with the password (200: the user exists and may sign in; 401: no such
user; 403 ``email_not_verified``) and ``GET /me``'s ``email_verified``."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

import pytest
from aiohttp.test_utils import TestClient

from entrypoints.http.pages.web import PAGE_HEADERS
from tests.e2e.helpers import (
    ONE_PER_BACKEND,
    PASSWORD,
    MakeClient,
    assert_problem,
    bearer,
    container_of,
)
from tests.e2e.oidc_helpers import (
    ISSUER,
    ORIGIN,
    REDIRECT,
    Registered,
    auth_params,
    authorize,
    csrf_of,
    exchange,
    pkce,
    query_of,
    register_client,
    verify_id_token,
)
from tests.smtp import SmtpSink, smtp_env, smtp_server, token_of

__all__ = ["smtp_server"]  # the fixture, for pytest

NEW = "newcomer@example.com"
_HIDDEN = re.compile(r'name="return_to" value="([^"]*)"')


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


def _unescape(value: str) -> str:
    return value.replace("&amp;", "&").replace("&#34;", '"').replace("&#39;", "'")


def _cookie(client: TestClient, name: str) -> str | None:
    for cookie in client.session.cookie_jar:
        if cookie.key == name:
            return cookie.value
    return None


async def _open_form(client: TestClient, return_to: str | None = None) -> str:
    """GET /ui/register (the CSRF cookie set); returns the page."""
    params = {} if return_to is None else {"return_to": return_to}
    resp = await client.get("/ui/register", params=params)
    assert resp.status == 200, await resp.text()
    for name, value in PAGE_HEADERS.items():
        assert resp.headers[name] == value, name
    return await resp.text()


async def _post(client: TestClient, email: str = NEW, password: str = PASSWORD,
                again: str | None = None, return_to: str = "", **extra: str) -> Any:  # fmt: skip
    form = {"email": email, "password": password,
            "password_again": password if again is None else again,
            "return_to": return_to, "csrf_token": csrf_of(client), **extra}  # fmt: skip
    return await client.post("/ui/register", data=form, headers=ORIGIN, allow_redirects=False)


async def _json_login(client: TestClient, email: str = NEW, password: str = PASSWORD) -> Any:
    return await client.post("/login", json={"email": email, "password": password})


async def _verified(client: TestClient, email: str = NEW) -> bool:
    """``email_verified`` of the user, read from ``GET /me`` after a JSON login."""
    resp = await _json_login(client, email)
    assert resp.status == 200, await resp.text()
    token = (await resp.json())["access_token"]
    me = await (await client.get("/me", headers=bearer(token))).json()
    return bool(me["email_verified"])


async def _authorization(client: TestClient) -> tuple[Registered, str, str]:
    """An app's authorization request (skip_consent) sent without a session: (the app, the PKCE
    verifier, the login page's ``return_to`` — the request itself)."""
    app = await register_client(client, skip_consent=True)
    verifier, challenge = pkce()
    resp = await authorize(client, auth_params(app, challenge))
    assert resp.status == 303
    return app, verifier, query_of(resp.headers["Location"])["return_to"]


async def _code_at_the_app(client: TestClient, app: Registered, verifier: str,
                           location: str) -> dict[str, Any]:  # fmt: skip
    """Follow ``location`` (the authorization request) to the app; the ID token's claims."""
    resp = await client.get(location, allow_redirects=False)
    assert resp.status == 303, await resp.text()
    assert resp.headers["Location"].startswith(REDIRECT), resp.headers["Location"]
    code = query_of(resp.headers["Location"])["code"]
    tokens = await (await exchange(client, app, code, verifier)).json()
    return await verify_id_token(client, tokens["id_token"], app.id)


async def test_sign_up_signs_in_at_once_and_the_app_gets_its_code(client: TestClient) -> None:
    """Open sign-up, no verification required: the login page of an app's authorization request
    links "Create account" with the same ``return_to``; the form states the password rules
    (hint and ``minlength``); a good form → 303 back to the request with the hosted-session
    cookie, and the app gets a code and an ID token for the new user. Over the JSON API the
    user signs in with that password, its email not verified yet."""
    app, verifier, return_to = await _authorization(client)
    login = await (await client.get("/ui/login", params={"return_to": return_to})).text()
    assert 'href="/ui/register?' + _escape(urlencode({"return_to": return_to})) + '"' in login
    html = await _open_form(client, return_to)
    assert [_unescape(v) for v in _HIDDEN.findall(html)] == [return_to]
    assert html.count('minlength="8"') == 2 and "At least 8 characters" in html
    assert 'name="password_again"' in html and 'autocomplete="new-password"' in html

    resp = await _post(client, return_to=return_to)
    assert resp.status == 303, await resp.text()
    assert resp.headers["Location"] == return_to
    assert _cookie(client, "authsvc_session") is not None
    claims = await _code_at_the_app(client, app, verifier, resp.headers["Location"])
    assert claims["amr"] == ["pwd"] and claims["acr"] == "1"
    assert await _verified(client) is False


def _escape(value: str) -> str:
    return value.replace("&", "&amp;")


async def test_default_return_to_is_the_account_page(client: TestClient) -> None:
    """Without ``return_to`` the new user lands on the account page, signed in."""
    html = await _open_form(client)
    assert _HIDDEN.findall(html) == ["/ui/account"]
    resp = await _post(client, return_to="/ui/account")
    assert resp.status == 303 and resp.headers["Location"] == "/ui/account"
    resp = await client.get("/ui/account", allow_redirects=False)
    assert resp.status == 200 and NEW in await resp.text()


@pytest.mark.parametrize("unsafe", ["https://evil.example/", "//evil.example/x", "/\\evil.example",
                                    "javascript:alert(1)"])  # fmt: skip
async def test_an_unsafe_return_to_is_refused(client: TestClient, unsafe: str) -> None:
    """A ``return_to`` that is not a path of this service is ignored (never followed), on the
    page and on the POST: the account page instead."""
    html = await _open_form(client, unsafe)
    assert _HIDDEN.findall(html) == ["/ui/account"]
    resp = await _post(client, return_to=unsafe)
    assert resp.status == 303 and resp.headers["Location"] == "/ui/account"
    assert (await _json_login(client)).status == 200


async def test_form_errors_show_the_form_again_and_change_nothing(client: TestClient) -> None:
    """Two different passwords, a too short one, a too long one (73 bytes) and a malformed
    email: 422, the form again with the email kept and no password echoed; no user exists
    afterwards (the JSON login with that password is 401)."""
    await _open_form(client)
    cases = [
        ({"again": PASSWORD + "x"}, "are not the same"),
        ({"password": "short7!"}, "too short: use at least 8 characters"),
        ({"password": "é" * 37}, "too long: use at most 72 bytes"),
        ({"email": "not-an-email"}, "valid email address"),
    ]
    for fields, message in cases:
        resp = await _post(client, **fields)
        html = await resp.text()
        assert resp.status == 422, html
        assert message in html and 'role="alert"' in html
        assert f'value="{fields.get("email", NEW)}"' in html
        assert PASSWORD not in html and "short7!" not in html
        assert _cookie(client, "authsvc_session") is None
    await assert_problem(await _json_login(client), 401, "invalid_credentials")


async def test_an_existing_email_answers_as_post_register_does(client: TestClient) -> None:
    """An email with an account: 409 like ``POST /register`` (which says the same), the form
    with a way to sign in or reset; the existing account is unchanged (its password still
    works, the one tried does not)."""
    resp = await client.post("/register", json={"email": NEW, "password": PASSWORD})
    assert resp.status == 201
    await assert_problem(await client.post(
        "/register", json={"email": NEW.upper(), "password": "another password"}), 409,
        "email_taken")  # fmt: skip
    await _open_form(client)
    resp = await _post(client, email=NEW.upper(), password="another password")
    html = await resp.text()
    assert resp.status == 409 and "already exists" in html and 'href="/ui/forgot?' in html
    assert _cookie(client, "authsvc_session") is None
    assert (await _json_login(client)).status == 200
    await assert_problem(await _json_login(client, password="another password"), 401,
                         "invalid_credentials")  # fmt: skip


async def test_a_post_without_csrf_or_from_another_origin_is_refused(client: TestClient) -> None:
    """No ``csrf_token``, a wrong one, another ``Origin``: 403 page, no user."""
    await _open_form(client)
    form = {"email": NEW, "password": PASSWORD, "password_again": PASSWORD}
    resp = await client.post("/ui/register", data=form, headers=ORIGIN, allow_redirects=False)
    assert resp.status == 403 and "did not come from this site" in await resp.text()
    resp = await client.post("/ui/register", data={**form, "csrf_token": "x" * 43},
                             headers=ORIGIN, allow_redirects=False)  # fmt: skip
    assert resp.status == 403
    resp = await client.post("/ui/register", data={**form, "csrf_token": csrf_of(client)},
                             headers={"Origin": "https://evil.example"},
                             allow_redirects=False)  # fmt: skip
    assert resp.status == 403
    await assert_problem(await _json_login(client), 401, "invalid_credentials")


async def test_closed_sign_up_refuses_page_and_json_alike(make_client: MakeClient) -> None:
    """``auth.allow_registration = false``: no "Create account" on the login page; the page says
    sign-up is closed (403); its POST and ``POST /register`` are refused (403
    ``registration_closed``); no user exists afterwards."""
    client = await make_client({"AUTHSVC_AUTH__ALLOW_REGISTRATION": "false"})
    login = await (await client.get("/ui/login")).text()
    assert "/ui/register" not in login and "Create account" not in login
    resp = await client.get("/ui/register")
    html = await resp.text()
    assert resp.status == 403 and "Sign-up is closed" in html and 'name="password"' not in html
    resp = await _post(client)
    assert resp.status == 403 and "Sign-up is closed" in await resp.text()
    await assert_problem(await client.post("/register", json={"email": NEW, "password": PASSWORD}),
                         403, "registration_closed")  # fmt: skip
    await assert_problem(await _json_login(client), 401, "invalid_credentials")


async def test_the_anonymous_write_bucket_limits_the_page(make_client: MakeClient) -> None:
    """``server.anonymous_write_rate``: past the burst, ``POST /ui/register`` gets the 429 page
    before anything is read or written (the same bucket as ``POST /register``)."""
    client = await make_client({"AUTHSVC_SERVER__ANONYMOUS_WRITE_RATE": "0.01",
                                "AUTHSVC_SERVER__ANONYMOUS_WRITE_BURST": "2"})  # fmt: skip
    await _open_form(client)
    assert (
        await client.post("/register", json={"email": "a@example.com", "password": PASSWORD})
    ).status == 201
    assert (await _post(client, email="b@example.com")).status == 303
    resp = await _post(client, email="c@example.com")
    assert resp.status == 429 and resp.headers["Content-Type"].startswith("text/html")
    async with container_of(client).storage().read() as uow:  # the JSON login is limited too
        assert await uow.users.get_by_email("c@example.com") is None
        assert await uow.users.get_by_email("b@example.com") is not None


async def _mail_client(make_client: MakeClient, port: int) -> TestClient:
    return await make_client({
        **smtp_env(port),
        "AUTHSVC_EMAIL__VERIFY_URL": ISSUER + "/ui/verify?token={token}",
        "AUTHSVC_AUTH__REQUIRE_VERIFIED_EMAIL": "true",
    })  # fmt: skip


async def _confirm(client: TestClient, token: str) -> Any:
    resp = await client.get("/ui/verify", params={"token": token})
    assert resp.status == 200 and 'action="/ui/verify"' in await resp.text()
    form = {"token": token, "csrf_token": csrf_of(client)}
    return await client.post("/ui/verify", data=form, headers=ORIGIN, allow_redirects=False)


async def test_verification_link_signs_in_and_goes_on_to_the_app(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    """``auth.require_verified_email``: the sign-up of an app's authorization request → 303 to
    the check-mail page, not signed in (the JSON login: 403 ``email_not_verified``); the mailed
    link opens /ui/verify, whose POST in this browser confirms the address, signs in and goes on
    to the request → the app gets a code and an ID token. The sign-up cookies are cleared;
    the JSON login now works and ``email_verified`` is true."""
    sink, port = smtp_server
    client = await _mail_client(make_client, port)
    app, verifier, return_to = await _authorization(client)
    await _open_form(client, return_to)
    resp = await _post(client, return_to=return_to)
    assert resp.status == 303 and resp.headers["Location"] == "/ui/register/check-mail"
    assert _cookie(client, "authsvc_session") is None
    assert _cookie(client, "authsvc_signup") is not None
    resp = await client.get("/ui/register/check-mail")
    assert resp.status == 200 and "Check your email" in await resp.text()
    await assert_problem(await _json_login(client), 403, "email_not_verified")

    resp = await _confirm(client, token_of(await sink.wait_for(NEW)))
    assert resp.status == 303 and resp.headers["Location"] == return_to
    assert _cookie(client, "authsvc_session") is not None
    assert _cookie(client, "authsvc_signup") in (None, "")
    claims = await _code_at_the_app(client, app, verifier, return_to)
    assert claims["amr"] == ["pwd"]
    assert await _verified(client) is True


async def test_the_link_elsewhere_or_with_a_forged_proof_only_confirms(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    """The link opened in a browser that did not sign up (no sign-up cookie), or with the
    proof's MAC altered: the address is confirmed (303 /ui/verify/done), no session starts;
    a used link is 400."""
    sink, port = smtp_server
    client = await _mail_client(make_client, port)
    for n, tamper in enumerate(("drop", "forge")):
        email = f"user{n}@example.com"
        await _open_form(client)
        assert (await _post(client, email=email)).status == 303
        proof = _cookie(client, "authsvc_signup")
        assert proof is not None
        client.session.cookie_jar.clear(lambda c: c.key == "authsvc_signup")
        if tamper == "forge":
            mac = proof.rsplit(".", 1)[1]
            forged = proof[: -len(mac)] + ("A" if mac[0] != "A" else "B") + mac[1:]
            client.session.cookie_jar.update_cookies({"authsvc_signup": forged})
        token = token_of(await sink.wait_for(email))
        resp = await _confirm(client, token)
        assert resp.status == 303 and resp.headers["Location"] == "/ui/verify/done"
        assert _cookie(client, "authsvc_session") is None
        assert await _verified(client, email) is True
        resp = await _confirm(client, token)
        assert resp.status == 400 and "invalid, expired or used" in await resp.text()
