"""The hosted recovery pages over HTTP with real SMTP, on SQLite and PostgreSQL (
docs/reference/accounts.md and docs/reference/oauth-and-oidc.md; research §6 OP-26, OP-27
"forgot-password and back"): /ui/forgot, /ui/reset, /ui/verify call the JSON API's use cases, keep
its enumeration promise and throttle, answer every POST with 303, check CSRF, carry the page
headers, and bring the user back to the sign-in interaction they left."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient

from entrypoints.http.pages.web import PAGE_HEADERS
from tests.e2e.helpers import ONE_PER_BACKEND, PASSWORD, MakeClient, bearer
from tests.e2e.oidc_helpers import (
    ISSUER,
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
)
from tests.smtp import SmtpSink, smtp_env, smtp_server, token_of

__all__ = ["smtp_server"]  # the fixture, for pytest

ALICE = "alice@example.com"
NEW_PASSWORD = "a brand new passphrase"
_HIDDEN = re.compile(r'name="return_to" value="([^"]*)"')


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


async def _mail_client(make_client: MakeClient, port: int, **env: str) -> TestClient:
    return await make_client({
        **smtp_env(port),
        "AUTHSVC_EMAIL__RESET_URL": ISSUER + "/ui/reset?token={token}",
        "AUTHSVC_EMAIL__VERIFY_URL": ISSUER + "/ui/verify?token={token}",
        **{f"AUTHSVC_{k}": v for k, v in env.items()},
    })  # fmt: skip


def _assert_page_headers(resp: ClientResponse) -> None:
    for name, value in PAGE_HEADERS.items():
        assert resp.headers[name] == value, name


def _unescape(value: str) -> str:
    return value.replace("&amp;", "&").replace("&#34;", '"').replace("&#39;", "'")


async def _forgot(client: TestClient, email: str, return_to: str) -> tuple[int, str, str]:
    form = {"email": email, "csrf_token": csrf_of(client), "return_to": return_to}
    resp = await client.post("/ui/forgot", data=form, headers=ORIGIN, allow_redirects=False)
    return resp.status, resp.headers.get("Location", ""), await resp.text()


async def test_forgot_reset_and_back_to_the_interaction(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    """OP-27: from the login page of an authorization request, "forgot password" (the login
    page's link, return_to read from its Referer) → the form; a known and an unknown email get
    the same 303 and page; the mailed link opens /ui/reset; a weak password → 422 form; a good
    one → 303, the JSON API's sessions end; the done page links to the login page of the same
    request, and signing in there with the new password lands on the client with a code."""
    sink, port = smtp_server
    client = await _mail_client(make_client, port)
    await register_user(client)
    resp = await client.post("/login", json={"email": ALICE, "password": PASSWORD})
    old_refresh = (await resp.json())["refresh_token"]
    app = await register_client(client, skip_consent=True)
    verifier, challenge = pkce()
    resp = await authorize(client, auth_params(app, challenge))
    login_location = resp.headers["Location"]
    return_to = query_of(login_location)["return_to"]
    resp = await client.get(login_location)
    assert 'href="/ui/forgot' in await resp.text()

    resp = await client.get("/ui/forgot", headers={"Referer": ISSUER + login_location})
    assert resp.status == 200
    _assert_page_headers(resp)
    assert [_unescape(v) for v in _HIDDEN.findall(await resp.text())] == [return_to]
    resp = await client.get("/ui/forgot", params={"return_to": return_to})
    assert [_unescape(v) for v in _HIDDEN.findall(await resp.text())] == [return_to]
    resp = await client.get(
        "/ui/forgot", headers={"Referer": "https://evil.example/ui/login?return_to=/x"}
    )
    assert _HIDDEN.findall(await resp.text()) == [""]

    known = await _forgot(client, ALICE, return_to)
    unknown = await _forgot(client, "nobody@example.com", return_to)
    assert known == unknown and known[0] == 303
    assert known[1] == "/ui/forgot/sent?" + urlencode({"return_to": return_to})
    resp = await client.get(known[1])
    assert resp.status == 200 and "Check your email" in await resp.text()

    token = token_of(await sink.wait_for(ALICE, 2))  # 1: the verification mail
    resp = await client.get("/ui/reset", params={"token": token})
    assert resp.status == 200 and 'name="new_password"' in await resp.text()
    _assert_page_headers(resp)
    form = {"token": token, "new_password": "short", "csrf_token": csrf_of(client)}
    resp = await client.post("/ui/reset", data=form, headers=ORIGIN, allow_redirects=False)
    assert resp.status == 422 and "cannot be used" in await resp.text()
    form["new_password"] = NEW_PASSWORD
    resp = await client.post("/ui/reset", data=form, headers=ORIGIN, allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"] == "/ui/reset/done"
    resp = await client.post("/refresh", json={"refresh_token": old_refresh})
    assert resp.status == 401  # every session of the user ended
    resp = await client.post("/ui/reset", data=form, headers=ORIGIN, allow_redirects=False)
    assert resp.status == 400 and "invalid, expired or used" in await resp.text()

    resp = await client.get("/ui/reset/done")
    text = await resp.text()
    links = [_unescape(v) for v in re.findall(r'<a href="([^"]*)">Sign in</a>', text)]
    assert len(links) == 1 and query_of(links[0])["return_to"] == return_to, links
    location = await sign_in(client, query_of(links[0])["return_to"], ALICE, NEW_PASSWORD)
    resp = await client.get(location, allow_redirects=False)
    assert resp.headers["Location"].startswith(REDIRECT + "?code=")
    code = query_of(resp.headers["Location"])["code"]
    assert (await exchange(client, app, code, verifier)).status == 200


async def test_verify_page_spends_the_token_on_post_only(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    """docs/reference/accounts.md as a page: the mailed link's GET shows a button and changes
    nothing (mail scanners fetch links); its POST → 303 /ui/verify/done and the email is verified;
    the link again → 400 page; a POST without the CSRF token → 403."""
    sink, port = smtp_server
    client = await _mail_client(make_client, port)
    await register_user(client)
    token = token_of(await sink.wait_for(ALICE, 1))
    resp = await client.get("/ui/verify", params={"token": token})
    assert resp.status == 200 and 'action="/ui/verify"' in await resp.text()
    _assert_page_headers(resp)
    resp = await client.post("/login", json={"email": ALICE, "password": PASSWORD})
    access = (await resp.json())["access_token"]
    assert (await (await client.get("/me", headers=bearer(access))).json())[
        "email_verified"
    ] is False
    resp = await client.post("/ui/verify", data={"token": token}, headers=ORIGIN,
                             allow_redirects=False)  # fmt: skip
    assert resp.status == 403
    form = {"token": token, "csrf_token": csrf_of(client)}
    resp = await client.post("/ui/verify", data=form, headers=ORIGIN, allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"] == "/ui/verify/done"
    assert (await (await client.get("/me", headers=bearer(access))).json())[
        "email_verified"
    ] is True
    resp = await client.get("/ui/verify/done")
    assert resp.status == 200 and "Email confirmed" in await resp.text()
    resp = await client.post("/ui/verify", data=form, headers=ORIGIN, allow_redirects=False)
    assert resp.status == 400


async def test_forgot_is_csrf_checked_and_throttled(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    """CSRF: no token or a foreign Origin → 403 page. The JSON API's throttle: after
    auth.login_max_failures requests for one email the page answers 429 with Retry-After, alike
    for a known and an unknown email; a malformed email → 400 form."""
    _, port = smtp_server
    client = await _mail_client(make_client, port, AUTH__LOGIN_MAX_FAILURES="2")
    await register_user(client)
    await client.get("/ui/forgot")
    resp = await client.post("/ui/forgot", data={"email": ALICE}, headers=ORIGIN,
                             allow_redirects=False)  # fmt: skip
    assert resp.status == 403
    form = {"email": ALICE, "csrf_token": csrf_of(client)}
    resp = await client.post("/ui/forgot", data=form, headers={"Origin": "https://evil.example"},
                             allow_redirects=False)  # fmt: skip
    assert resp.status == 403
    for email in (ALICE, "nobody@example.com"):
        statuses = [(await _forgot(client, email, ""))[0] for _ in range(3)]
        assert statuses == [303, 303, 429], email
    form = {"email": "nobody@example.com", "csrf_token": csrf_of(client)}
    resp = await client.post("/ui/forgot", data=form, headers=ORIGIN, allow_redirects=False)
    assert resp.status == 429 and int(resp.headers["Retry-After"]) >= 1
    assert (await _forgot(client, "not an email", ""))[0] == 400
