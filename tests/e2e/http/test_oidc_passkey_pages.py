"""Passkeys on the hosted pages over HTTP (docs/reference/mfa-and-passkeys.md and
docs/reference/oauth-and-oidc.md; ADR 0033; research OP-20, OP-27), with the software authenticator:
the JSON endpoints ``/ui/passkey.js`` calls open the hosted session (cookie) and the code flow
carries the passkey's ``amr`` / ``acr`` into the ID token; every refusal is one 401 answer, CSRF and
the login throttle apply; the page offers passkeys and keeps the password path, which needs no
script."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pyotp
import pytest
from aiohttp.test_utils import TestClient

from entrypoints.http.assets import asset
from entrypoints.http.pages.routes import CODE_FAILED, LOGIN_FAILED
from tests.e2e.helpers import ONE_PER_BACKEND, PASSWORD, MakeClient, assert_problem, bearer
from tests.e2e.http.test_passkeys_http import enrolled, login_options
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
    verify_id_token,
)
from tests.webauthn_authenticator import BE, BS, UP, SoftAuthenticator


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


async def to_login_page(client: TestClient, app: Any) -> tuple[str, str]:
    """Start the code flow; returns (verifier, the login page's ``return_to``) with the login
    page opened (its CSRF cookie set)."""
    verifier, challenge = pkce()
    resp = await authorize(client, auth_params(app, challenge))
    assert resp.status == 303 and resp.headers["Location"].startswith("/ui/login?")
    return_to = parse_qs(urlsplit(resp.headers["Location"]).query)["return_to"][0]
    assert (await client.get("/ui/login", params={"return_to": return_to})).status == 200
    return verifier, return_to


async def post_assertion(client: TestClient, path: str, return_to: str, ceremony_id: str,
                         credential: dict[str, Any], headers: dict[str, str] | None = None,
                         csrf: str | None = None) -> Any:  # fmt: skip
    body = {"csrf_token": csrf_of(client) if csrf is None else csrf, "return_to": return_to,
            "ceremony_id": ceremony_id, "credential": credential}  # fmt: skip
    return await client.post(path, json=body, headers=ORIGIN if headers is None else headers)


async def passkey_sign_in(client: TestClient, return_to: str, device: SoftAuthenticator,
                          handle: bytes | None, **kwargs: Any) -> Any:  # fmt: skip
    """What the script does: options from the JSON API, the assertion to /ui/login/passkey."""
    started = await login_options(client)
    answer = device.assert_(started["options"], ISSUER, user_handle=handle, **kwargs)
    return await post_assertion(
        client, "/ui/login/passkey", return_to, started["ceremony_id"], answer
    )


def session_cookie(client: TestClient) -> str | None:
    return next((c.value for c in client.session.cookie_jar if c.key == "authsvc_session"), None)


async def finish_flow(
    client: TestClient, app: Any, return_to: str, verifier: str
) -> dict[str, Any]:
    """Back to /oauth/authorize signed in → the callback's code → the ID token's claims."""
    resp = await client.get(return_to, allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"].startswith(REDIRECT), resp.headers
    code = query_of(resp.headers["Location"])["code"]
    resp = await exchange(client, app, code, verifier)
    assert resp.status == 200, await resp.text()
    return await verify_id_token(client, (await resp.json())["id_token"], app.id)


async def test_a_passkey_signs_in_on_the_hosted_page_and_the_id_token_says_so(
    client: TestClient,
) -> None:
    """OP-20/OP-27: a passkey with user verification → amr ["hwk", "user"], acr "2"."""
    app = await register_client(client, skip_consent=True)
    _, device, handle = await enrolled(client)
    verifier, return_to = await to_login_page(client, app)
    resp = await passkey_sign_in(client, return_to, device, handle)
    assert resp.status == 200, await resp.text()
    assert await resp.json() == {"redirect": return_to}
    assert resp.headers["Cache-Control"] == "no-store"
    assert "HttpOnly" in resp.headers["Set-Cookie"] and session_cookie(client)
    claims = await finish_flow(client, app, return_to, verifier)
    assert claims["amr"] == ["hwk", "user"] and claims["acr"] == "2"


async def test_refusals_are_one_answer_csrf_and_the_throttle_apply(
    make_client: MakeClient,
) -> None:
    client = await make_client({"AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "3"})
    app = await register_client(client, skip_consent=True)
    _, device, handle = await enrolled(client)
    _, return_to = await to_login_page(client, app)
    started = await login_options(client)
    answer = device.assert_(started["options"], ISSUER, user_handle=handle)
    # CSRF: no token, a wrong one, another origin → 403 (the ceremony is not even taken).
    for csrf, headers in (("", ORIGIN), ("x" * 43, ORIGIN),
                          (None, {"Origin": "https://evil.example"})):  # fmt: skip
        resp = await post_assertion(client, "/ui/login/passkey", return_to,
                                    started["ceremony_id"], answer, headers, csrf)  # fmt: skip
        await assert_problem(resp, 403, "forbidden")
    # A signature by another key, an unknown credential, a used ceremony: one 401 answer.
    wrong = await passkey_sign_in(client, return_to, device, handle,
                                  signer=SoftAuthenticator("ES256"))  # fmt: skip
    body = await assert_problem(wrong, 401, "invalid_passkey")
    assert body["detail"] == str(LOGIN_FAILED)
    unknown = await passkey_sign_in(client, return_to, SoftAuthenticator("ES256"), handle)
    assert await assert_problem(unknown, 401, "invalid_passkey") == body
    resp = await post_assertion(client, "/ui/login/passkey", return_to, started["ceremony_id"],
                                answer)  # fmt: skip
    assert resp.status == 200, await resp.text()  # the one that was refused for its CSRF
    resp = await post_assertion(client, "/ui/login/passkey", return_to, started["ceremony_id"],
                                answer)  # fmt: skip
    assert await assert_problem(resp, 401, "invalid_passkey") == body
    # The login throttle (per credential id and address): past it, the right passkey is
    # refused alike, and the JSON API says why.
    client.session.cookie_jar.clear()
    _, return_to = await to_login_page(client, app)
    impostor = SoftAuthenticator("ES256", credential_id=device.credential_id)
    for _ in range(3):
        resp = await passkey_sign_in(client, return_to, impostor, handle)
        assert await assert_problem(resp, 401, "invalid_passkey") == body
    resp = await passkey_sign_in(client, return_to, device, handle)
    assert await assert_problem(resp, 401, "invalid_passkey") == body
    assert session_cookie(client) is None
    started = await login_options(client)
    answer = device.assert_(started["options"], ISSUER, user_handle=handle)
    resp = await client.post("/login/passkey", json={"ceremony_id": started["ceremony_id"],
                                                     "credential": answer})  # fmt: skip
    await assert_problem(resp, 429, "rate_limited")


async def test_a_passkey_answers_the_second_step_page(client: TestClient) -> None:
    """Password, then a passkey on /ui/login/mfa → amr ["pwd", "hwk", "mfa"], acr "2"."""
    app = await register_client(client, skip_consent=True)
    token, device, handle = await enrolled(client)
    enrolment = await (await client.post("/me/mfa/totp", json={"password": PASSWORD},
                                         headers=bearer(token))).json()  # fmt: skip
    code = pyotp.TOTP(enrolment["secret"]).now()
    resp = await client.post("/me/mfa/totp/confirm", json={"code": code}, headers=bearer(token))
    assert resp.status == 200
    verifier, return_to = await to_login_page(client, app)
    # Without the second step's cookie there is nothing to answer.
    resp = await client.post("/ui/login/mfa/passkey/options",
                             json={"csrf_token": csrf_of(client)}, headers=ORIGIN)  # fmt: skip
    assert (await assert_problem(resp, 401, "invalid_mfa_code"))["detail"] == str(CODE_FAILED)
    form = {"email": "alice@example.com", "password": PASSWORD, "csrf_token": csrf_of(client),
            "return_to": return_to}  # fmt: skip
    resp = await client.post("/ui/login", data=form, headers=ORIGIN, allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"].startswith("/ui/login/mfa?")
    page = await (await client.get(resp.headers["Location"])).text()
    assert 'data-passkey="mfa"' in page and f'src="{asset("passkey.js")}"' in page
    resp = await client.post("/ui/login/mfa/passkey/options", json={}, headers=ORIGIN)
    await assert_problem(resp, 403, "forbidden")
    resp = await client.post("/ui/login/mfa/passkey/options",
                             json={"csrf_token": csrf_of(client)}, headers=ORIGIN)  # fmt: skip
    assert resp.status == 200, await resp.text()
    started = await resp.json()
    assert len(started["options"]["allowCredentials"]) == 1  # alice's passkey
    answer = device.assert_(started["options"], ISSUER, user_handle=handle)
    # A bound ceremony does not sign in alone.
    resp = await post_assertion(client, "/ui/login/passkey", return_to, started["ceremony_id"],
                                answer)  # fmt: skip
    await assert_problem(resp, 401, "invalid_passkey")
    resp = await client.post("/ui/login/mfa/passkey/options",
                             json={"csrf_token": csrf_of(client)}, headers=ORIGIN)  # fmt: skip
    started = await resp.json()
    wrong = device.assert_(started["options"], ISSUER, user_handle=handle,
                           signer=SoftAuthenticator("ES256"))  # fmt: skip
    resp = await post_assertion(client, "/ui/login/mfa/passkey", return_to,
                                started["ceremony_id"], wrong)  # fmt: skip
    assert (await assert_problem(resp, 401, "invalid_mfa_code"))["detail"] == str(CODE_FAILED)
    resp = await client.post("/ui/login/mfa/passkey/options",
                             json={"csrf_token": csrf_of(client)}, headers=ORIGIN)  # fmt: skip
    started = await resp.json()
    answer = device.assert_(started["options"], ISSUER, user_handle=handle)
    resp = await post_assertion(client, "/ui/login/mfa/passkey", return_to,
                                started["ceremony_id"], answer)  # fmt: skip
    assert resp.status == 200, await resp.text()
    assert await resp.json() == {"redirect": return_to}
    claims = await finish_flow(client, app, return_to, verifier)
    assert claims["amr"] == ["pwd", "hwk", "mfa"] and claims["acr"] == "2"


async def test_a_passkey_without_user_verification_is_one_factor(make_client: MakeClient) -> None:
    """``webauthn.user_verification = "preferred"`` and no UV flag: possession only."""
    client = await make_client({"AUTHSVC_WEBAUTHN__USER_VERIFICATION": "preferred"})
    app = await register_client(client, skip_consent=True)
    _, device, handle = await enrolled(client)
    verifier, return_to = await to_login_page(client, app)
    resp = await passkey_sign_in(client, return_to, device, handle, flags=UP | BE | BS)
    assert resp.status == 200, await resp.text()
    claims = await finish_flow(client, app, return_to, verifier)
    assert claims["amr"] == ["hwk"] and claims["acr"] == "1"


async def test_the_page_offers_passkeys_and_keeps_the_password_path(
    client: TestClient, make_client: MakeClient
) -> None:
    """authentik#23179: a user without a passkey signs in with the form alone (no script)."""
    html = await (await client.get("/ui/login")).text()
    assert 'autocomplete="username webauthn"' in html
    assert 'id="passkey"' in html and "Sign in with a passkey" in html
    assert f'<script src="{asset("passkey.js")}"></script>' in html and "<script>" not in html
    script = await client.get(asset("passkey.js"))
    assert script.status == 200 and script.content_type == "text/javascript"
    text = await script.text()
    assert 'ceremony("conditional")' in text and "abort()" in text
    app = await register_client(client, skip_consent=True)
    await register_user(client)  # no passkey
    verifier, return_to = await to_login_page(client, app)
    form = {"email": "alice@example.com", "password": PASSWORD, "csrf_token": csrf_of(client),
            "return_to": return_to}  # fmt: skip
    resp = await client.post("/ui/login", data=form, headers=ORIGIN, allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"] == return_to
    claims = await finish_flow(client, app, return_to, verifier)
    assert claims["amr"] == ["pwd"] and claims["acr"] == "1"
    # With webauthn.passwordless off a passkey alone cannot sign in: the page does not offer it.
    other = await make_client({"AUTHSVC_WEBAUTHN__PASSWORDLESS": "false"})
    html = await (await other.get("/ui/login")).text()
    assert 'id="passkey"' not in html and "passkey.js" not in html
    assert 'autocomplete="username webauthn"' in html
