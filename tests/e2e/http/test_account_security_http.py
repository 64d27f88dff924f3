"""The account page's security actions over HTTP (docs/reference/accounts.md, "The account page:
security"), on SQLite and PostgreSQL: the fresh-login rule and its re-authentication page, the
password change (the other sessions end, this one goes on), TOTP on / new recovery codes / off,
passkeys (add, rename, remove) and deleting the account — each refusal (stale login, wrong
password, CSRF) changing nothing, and each outcome checked over the JSON API afterwards."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pyotp
import pytest
from aiohttp.test_utils import TestClient
from dependency_injector import providers

from domain.audit import AuditQuery
from tests.e2e.helpers import (
    ONE_PER_BACKEND,
    PASSWORD,
    MakeClient,
    assert_problem,
    bearer,
    container_of,
    register_and_login,
)
from tests.e2e.oidc_helpers import ISSUER, ORIGIN, csrf_of, sign_in
from tests.fakes import FakeClock
from tests.webauthn_authenticator import SoftAuthenticator

NEW_PASSWORD = "a brand new passphrase"
WINDOW = 300
"""``ui.reauthentication_window``'s default (s)."""


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend."""
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
async def clocked(client: TestClient) -> AsyncIterator[tuple[TestClient, FakeClock]]:
    """The app with a clock that starts ``WINDOW`` + 60 s in the past, so a login now can be
    made stale by moving the clock to the present (the JSON API's tokens are then current)."""
    clock = FakeClock(datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=WINDOW + 60))
    container_of(client).clock.override(providers.Object(clock))
    try:
        yield client, clock
    finally:
        container_of(client).clock.reset_override()


async def _post(client: TestClient, path: str, form: dict[str, str], csrf: bool = True) -> Any:
    data = {**form, "csrf_token": csrf_of(client)} if csrf else form
    return await client.post(path, data=data, headers=ORIGIN, allow_redirects=False)


async def _get(client: TestClient, path: str) -> Any:
    return await client.get(path, allow_redirects=False)


def _reauth_target(resp: Any) -> str:
    """The ``return_to`` of a 303 to the re-authentication page."""
    assert resp.status == 303, resp.status
    parts = urlsplit(resp.headers["Location"])
    assert parts.path == "/ui/account/reauthenticate", resp.headers["Location"]
    return parse_qs(parts.query)["return_to"][0]


async def _login(client: TestClient, password: str = PASSWORD) -> Any:
    return await client.post("/login", json={"email": "alice@example.com", "password": password})


async def _me(client: TestClient, token: str) -> dict[str, Any]:
    resp = await client.get("/me", headers=bearer(token))
    assert resp.status == 200, await resp.text()
    return await resp.json()  # type: ignore[no-any-return]


async def test_a_stale_login_asks_for_the_password_first(
    clocked: tuple[TestClient, FakeClock],
) -> None:
    """Older than the window, every protected page and form goes to the re-authentication page
    (the form's action not done); a wrong password there is 403, a right one refreshes the
    session's login time and goes on; a foreign return_to is not followed."""
    client, clock = clocked
    await register_and_login(client)
    await sign_in(client, "/ui/account")
    clock.advance(WINDOW + 60)  # now the present: the login is 360 s old
    for path in ("/ui/account/password", "/ui/account/delete"):
        assert _reauth_target(await _get(client, path)) == path
    resp = await _post(client, "/ui/account/password", {
        "old_password": PASSWORD, "new_password": NEW_PASSWORD,
        "new_password_again": NEW_PASSWORD})  # fmt: skip
    assert _reauth_target(resp) == "/ui/account/password"
    assert _reauth_target(await _post(client, "/ui/account/totp", {})) == "/ui/account/totp"
    assert _reauth_target(await _post(client, "/ui/account/delete", {"password": PASSWORD}))
    assert (await _login(client)).status == 200  # nothing changed: the old password works
    page = await _get(client, "/ui/account/reauthenticate?return_to=/ui/account/password")
    assert page.status == 200 and 'name="password"' in await page.text()
    form = {"password": "not my password", "return_to": "/ui/account/password"}
    resp = await _post(client, "/ui/account/reauthenticate", form)
    assert resp.status == 403 and "password is wrong" in await resp.text()
    resp = await _post(client, "/ui/account/reauthenticate", {**form, "password": PASSWORD},
                       csrf=False)  # fmt: skip
    assert resp.status == 403
    assert _reauth_target(await _get(client, "/ui/account/password"))  # still stale
    resp = await _post(client, "/ui/account/reauthenticate", {**form, "password": PASSWORD})
    assert resp.status == 303 and resp.headers["Location"] == "/ui/account/password"
    assert (await _get(client, "/ui/account/password")).status == 200
    for foreign in ("https://evil.example/", "//evil.example", "/oauth/authorize?x=1"):
        form = {"password": PASSWORD, "return_to": foreign}
        resp = await _post(client, "/ui/account/reauthenticate", form)
        assert resp.status == 303 and resp.headers["Location"] == "/ui/account"
    clock.advance(WINDOW + 1)
    assert _reauth_target(await _get(client, "/ui/account/password"))


async def test_a_passkey_of_the_user_refreshes_a_stale_login(
    clocked: tuple[TestClient, FakeClock],
) -> None:
    """The re-authentication page offers a passkey to a user who has one; an assertion of it
    (options from /login/passkey/options for the user's email) makes the login fresh again;
    someone else's passkey, a used ceremony or a missing CSRF token do not."""
    client, clock = clocked
    clock.advance(WINDOW + 60)
    token = (await register_and_login(client))["access_token"]
    device = await _passkey_of(client, token)
    bob = (await register_and_login(client, "bob@example.com"))["access_token"]
    bobs = await _passkey_of(client, bob)
    await sign_in(client, "/ui/account")
    clock.advance(WINDOW + 1)
    page = await _get(client, "/ui/account/reauthenticate?return_to=/ui/account/totp")
    assert 'id="passkey-reauth"' in await page.text()

    async def answer(by: SoftAuthenticator, csrf: bool = True) -> Any:
        started = await (await client.post("/login/passkey/options",
                                           json={"email": "alice@example.com"})).json()  # fmt: skip
        body = {"ceremony_id": started["ceremony_id"], "return_to": "/ui/account/totp",
                "credential": by.assert_(started["options"], ISSUER),
                "csrf_token": csrf_of(client) if csrf else ""}  # fmt: skip
        return await client.post("/ui/account/reauthenticate/passkey", json=body, headers=ORIGIN)

    await assert_problem(await answer(bobs), 401, "reauthentication_required")
    await assert_problem(await answer(device, csrf=False), 403, "forbidden")
    assert _reauth_target(await _post(client, "/ui/account/totp", {}))  # still stale
    resp = await answer(device)
    assert resp.status == 200 and (await resp.json()) == {"redirect": "/ui/account/totp"}
    assert (await _post(client, "/ui/account/totp", {})).status == 200  # fresh now


async def _passkey_of(client: TestClient, token: str) -> SoftAuthenticator:
    """A passkey registered for ``token``'s user over the JSON API (with the password)."""
    resp = await client.post("/me/passkeys/registration/options", json={"password": PASSWORD},
                             headers=bearer(token))  # fmt: skip
    started = await resp.json()
    device = SoftAuthenticator("ES256")
    body = {"ceremony_id": started["ceremony_id"],
            "credential": device.register(started["options"], ISSUER)}  # fmt: skip
    assert (await client.post("/me/passkeys", json=body, headers=bearer(token))).status == 201
    return device


async def test_wrong_reauthentication_passwords_count_against_the_login_throttle(
    make_client: MakeClient,
) -> None:
    """With ``auth.login_max_failures`` = 3, three wrong passwords on the page make the fourth
    attempt — even the right password — 429, on the page and on POST /login alike."""
    client = await make_client({"AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "3"})
    await register_and_login(client)
    await sign_in(client, "/ui/account")
    form = {"password": "not my password", "return_to": "/ui/account/password"}
    for _ in range(3):
        assert (await _post(client, "/ui/account/reauthenticate", form)).status == 403
    resp = await _post(client, "/ui/account/reauthenticate", {**form, "password": PASSWORD})
    assert resp.status == 429 and int(resp.headers["Retry-After"]) > 0
    await assert_problem(await _login(client), 429, "rate_limited")


async def test_the_password_change_ends_the_other_sessions_not_this_one(
    client: TestClient,
) -> None:
    """Mismatch, too short, a wrong old password and a missing CSRF token change nothing; the
    right form changes it: the old password and the other session's refresh token are refused,
    /me/sessions lists this hosted session and not the other one, and the page still works."""
    pair = await register_and_login(client)
    await sign_in(client, "/ui/account")
    before = await client.get("/me/sessions", headers=bearer(pair["access_token"]))
    other_ids = {s["id"] for s in (await before.json())["items"]}
    assert len(other_ids) == 2  # the JSON login and this browser's hosted session
    page = await _get(client, "/ui/account/password")
    assert page.status == 200 and "At least 8 characters" in await page.text()
    good = {"old_password": PASSWORD, "new_password": NEW_PASSWORD,
            "new_password_again": NEW_PASSWORD}  # fmt: skip
    for form, status in (
        ({**good, "new_password_again": "something else"}, 422),
        ({**good, "new_password": "short", "new_password_again": "short"}, 422),
        ({**good, "old_password": "not my password"}, 403),
    ):
        assert (await _post(client, "/ui/account/password", form)).status == status
    assert (await _post(client, "/ui/account/password", good, csrf=False)).status == 403
    assert (await _login(client)).status == 200  # unchanged so far
    resp = await _post(client, "/ui/account/password", good)
    assert resp.status == 303 and resp.headers["Location"] == "/ui/account/done?action=password"
    await assert_problem(await _login(client), 401, "invalid_credentials")
    fresh = await _login(client, NEW_PASSWORD)
    assert fresh.status == 200
    resp = await client.post("/refresh", json={"refresh_token": pair["refresh_token"]})
    await assert_problem(resp, 401, "invalid_refresh_token")
    sessions = await client.get("/me/sessions",
                                headers=bearer((await fresh.json())["access_token"]))  # fmt: skip
    after = {s["id"] for s in (await sessions.json())["items"]}
    assert len(after & other_ids) == 1  # this page's hosted session, not the JSON login's
    assert len(after) == 2  # ... and the new JSON login
    assert (await _get(client, "/ui/account")).status == 200  # this session goes on


def _secret_of(html: str) -> str:
    match = re.search(r'id="secret"[^>]*>([A-Z2-7]+)<', html)
    assert match is not None, html
    return match.group(1)


def _codes_of(html: str) -> list[str]:
    return re.findall(r"<li><code>([a-z2-9-]{29})</code></li>", html)


async def test_totp_on_new_recovery_codes_and_off(client: TestClient) -> None:
    """Turn on: the QR code inline (the adapter's SVG, labelled), the key as text; a wrong
    code 422; the right one shows ten recovery codes and /me says mfa_enabled. New codes
    replace the old ones (an old one is refused at /login/mfa, a new one works). Off: a wrong
    password 403 (still on), the right one turns it off."""
    token = (await register_and_login(client))["access_token"]
    await sign_in(client, "/ui/account")
    assert (await _post(client, "/ui/account/totp", {}, csrf=False)).status == 403
    resp = await _post(client, "/ui/account/totp", {})
    html = await resp.text()
    assert resp.status == 200 and '<svg role="img" aria-label="QR code"' in html
    assert "<script" not in html.split("<svg", 1)[1].split("</svg>", 1)[0]
    totp = pyotp.TOTP(_secret_of(html))
    later = totp.at(datetime.now(UTC) + timedelta(minutes=10))
    resp = await _post(client, "/ui/account/totp/confirm", {"code": later})
    assert resp.status == 422 and not (await _me(client, token))["mfa_enabled"]
    resp = await _post(client, "/ui/account/totp/confirm", {"code": totp.now()})
    first = _codes_of(await resp.text())
    assert resp.status == 200 and len(first) == 10
    assert (await _me(client, token))["mfa_enabled"] is True
    resp = await _post(client, "/ui/account/totp/recovery-codes", {})
    second = _codes_of(await resp.text())
    assert resp.status == 200 and len(second) == 10 and not set(first) & set(second)
    async with container_of(client).storage().read() as uow:
        audited = await uow.audit.list_page(AuditQuery(), None, 1000)
    regenerated = [r for r in audited if r.type == "mfa.recovery_codes_regenerated"]
    assert len(regenerated) == 1 and not any(c in str(regenerated[0]) for c in first + second)
    for code, status in ((first[0], 401), (second[0], 200)):
        login = await (await _login(client)).json()
        resp = await client.post("/login/mfa", json={"mfa_token": login["mfa_token"],
                                                     "code": code})  # fmt: skip
        assert resp.status == status, await resp.text()
    resp = await _post(client, "/ui/account/totp/disable", {"password": "not my password"})
    assert resp.status == 403 and (await _me(client, token))["mfa_enabled"] is True
    resp = await _post(client, "/ui/account/totp/disable", {"password": PASSWORD})
    assert resp.status == 303 and (await _me(client, token))["mfa_enabled"] is False
    assert (await _login(client)).status == 200  # no second step any more


async def test_passkeys_add_rename_remove(clocked: tuple[TestClient, FakeClock]) -> None:
    """Add through the page's two JSON calls (CSRF-checked; a stale login answers 401 with
    the re-authentication page), rename, remove (a wrong password 403 keeps it); each checked
    at GET /me/passkeys."""
    client, clock = clocked
    clock.advance(WINDOW + 60)
    token = (await register_and_login(client))["access_token"]
    await sign_in(client, "/ui/account")
    resp = await client.post("/ui/account/passkeys/options", json={}, headers=ORIGIN)
    await assert_problem(resp, 403, "forbidden")
    resp = await client.post("/ui/account/passkeys/options",
                             json={"csrf_token": csrf_of(client)}, headers=ORIGIN)  # fmt: skip
    assert resp.status == 200, await resp.text()
    started = await resp.json()
    device = SoftAuthenticator("ES256")
    body = {"csrf_token": csrf_of(client), "ceremony_id": started["ceremony_id"],
            "credential": device.register(started["options"], ISSUER), "name": "laptop"}  # fmt: skip
    resp = await client.post("/ui/account/passkeys/add", json=body, headers=ORIGIN)
    assert resp.status == 200 and (await resp.json()) == {"redirect": "/ui/account/passkeys"}
    listed = (await (await client.get("/me/passkeys", headers=bearer(token))).json())["items"]
    assert [p["name"] for p in listed] == ["laptop"]
    page = await _get(client, "/ui/account/passkeys")
    assert page.status == 200 and "laptop" in await page.text()
    passkey_id = listed[0]["id"]
    resp = await _post(client, "/ui/account/passkeys/rename",
                       {"passkey_id": passkey_id, "name": "work laptop"})  # fmt: skip
    assert resp.status == 303
    listed = (await (await client.get("/me/passkeys", headers=bearer(token))).json())["items"]
    assert [p["name"] for p in listed] == ["work laptop"]
    form = {"passkey_id": passkey_id, "password": "not my password"}
    assert (await _post(client, "/ui/account/passkeys/remove", form)).status == 403
    assert (await _me(client, token))["passkeys"] == 1
    resp = await _post(client, "/ui/account/passkeys/remove", {**form, "password": PASSWORD})
    assert resp.status == 303 and (await _me(client, token))["passkeys"] == 0
    clock.advance(WINDOW + 1)
    resp = await client.post("/ui/account/passkeys/options",
                             json={"csrf_token": csrf_of(client)}, headers=ORIGIN)  # fmt: skip
    body = await assert_problem(resp, 401, "reauthentication_required")
    assert body["redirect"].startswith("/ui/account/reauthenticate?")
    assert "Confirm it is you" in await (await _get(client, "/ui/account/passkeys")).text()


async def test_delete_the_account(client: TestClient) -> None:
    """A wrong password or a missing CSRF token keeps the account; the right password deletes
    it, clears the session cookie and ends at the goodbye page: the login and the access token
    are refused, and the account page asks for a login."""
    token = (await register_and_login(client))["access_token"]
    await sign_in(client, "/ui/account")
    page = await _get(client, "/ui/account/delete")
    assert page.status == 200 and "alice@example.com" in await page.text()
    assert (await _post(client, "/ui/account/delete", {"password": "nope nope"})).status == 403
    assert (await _post(client, "/ui/account/delete", {"password": PASSWORD}, False)).status == 403
    assert (await _me(client, token))["email"] == "alice@example.com"
    resp = await _post(client, "/ui/account/delete", {"password": PASSWORD})
    assert resp.status == 303 and resp.headers["Location"] == "/ui/account/deleted"
    assert "authsvc_session" in resp.headers.get("Set-Cookie", "")
    goodbye = await _get(client, "/ui/account/deleted")
    assert goodbye.status == 200 and "Goodbye" in await goodbye.text()
    await assert_problem(await _login(client), 401, "invalid_credentials")
    await assert_problem(await client.get("/me", headers=bearer(token)), 401, "invalid_token")
    resp = await _get(client, "/ui/account")
    assert resp.status == 303 and resp.headers["Location"].startswith("/ui/login")
