"""Fresh proofs over HTTP (docs/reference/mfa-and-passkeys.md, ASVS 5.0 V7.5.1; ADR 0025), on SQLite
and PostgreSQL: adding a sign-in factor (``POST /me/passkeys/registration/options``, ``POST
/me/mfa/totp``) needs the password or a passkey assertion of the caller in the same request, else
401 ``reauthentication_required``; access-token claims stay the seed's; wrong passwords on every
route that confirms one count against the login throttle of the user's email and the client address
(429 past ``auth.login_max_failures``)."""

from __future__ import annotations

from typing import Any

import jwt
import pytest
from aiohttp.test_utils import TestClient

from tests.e2e.helpers import (
    ONE_PER_BACKEND,
    PASSWORD,
    MakeClient,
    assert_problem,
    bearer,
    register_and_login,
)
from tests.webauthn_authenticator import SoftAuthenticator

ORIGIN = "http://localhost:8080"  # the origin of the default auth.issuer
ADD_FACTOR = ["/me/passkeys/registration/options", "/me/mfa/totp"]
SEED_CLAIMS = {"sub", "email", "role", "org_id", "iss", "aud", "iat", "exp", "groups", "jti"}


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend."""
    return request.param  # type: ignore[no-any-return]


async def _with_passkey(client: TestClient, email: str = "alice@example.com") -> tuple[str, Any]:
    """A user with one passkey (registered with the password): its access token and device."""
    token = (await register_and_login(client, email))["access_token"]
    resp = await client.post(ADD_FACTOR[0], json={"password": PASSWORD}, headers=bearer(token))
    assert resp.status == 200, await resp.text()
    started = await resp.json()
    device = SoftAuthenticator("ES256")
    body = {"ceremony_id": started["ceremony_id"],
            "credential": device.register(started["options"], ORIGIN)}  # fmt: skip
    assert (await client.post("/me/passkeys", json=body, headers=bearer(token))).status == 201
    return token, device


async def _assertion(client: TestClient, device: Any, email: str | None = None) -> dict[str, Any]:
    """``{"ceremony_id", "credential"}``: a fresh login ceremony answered by ``device``."""
    resp = await client.post(
        "/login/passkey/options", json={} if email is None else {"email": email}
    )
    started = await resp.json()
    return {"ceremony_id": started["ceremony_id"],
            "credential": device.assert_(started["options"], ORIGIN)}  # fmt: skip


@pytest.mark.parametrize("path", ADD_FACTOR)
async def test_adding_a_factor_needs_the_password(client: TestClient, path: str) -> None:
    token = (await register_and_login(client))["access_token"]
    for body in (None, {}, {"name": "laptop"}, {"password": "not my password"}):
        resp = await client.post(path, json=body, headers=bearer(token))
        await assert_problem(resp, 401, "reauthentication_required")
        assert "insufficient_user_authentication" in resp.headers["WWW-Authenticate"]
    resp = await client.post(path, data=b"", headers=bearer(token))  # no body at all
    await assert_problem(resp, 401, "reauthentication_required")
    resp = await client.post(path, json={"password": PASSWORD}, headers=bearer(token))
    assert resp.status == 200, await resp.text()
    resp = await client.post(path, json={"password": PASSWORD})  # the bearer token comes first
    await assert_problem(resp, 401, "invalid_token")


@pytest.mark.parametrize("path", ADD_FACTOR)
async def test_a_passkey_assertion_of_the_caller_is_a_fresh_proof(
    client: TestClient, path: str
) -> None:
    token, device = await _with_passkey(client)
    proof = await _assertion(client, device)
    resp = await client.post(path, json=proof, headers=bearer(token))
    assert resp.status == 200, await resp.text()
    resp = await client.post(path, json=proof, headers=bearer(token))  # the ceremony is used up
    await assert_problem(resp, 401, "reauthentication_required")
    proof = await _assertion(client, device, "alice@example.com")  # options for an email
    assert (await client.post(path, json=proof, headers=bearer(token))).status == 200
    # Someone else's passkey proves nothing about the caller.
    bob, _ = await _with_passkey(client, "bob@example.com")
    resp = await client.post(path, json=await _assertion(client, device), headers=bearer(bob))
    await assert_problem(resp, 401, "reauthentication_required")
    # A forged assertion (another key under the same credential id) is refused.
    forged = SoftAuthenticator("ES256", credential_id=device.credential_id)
    resp = await client.post(path, json=await _assertion(client, forged), headers=bearer(token))
    await assert_problem(resp, 401, "reauthentication_required")
    # Both proofs, or half an assertion: 422.
    both = {"password": PASSWORD, **await _assertion(client, device)}
    resp = await client.post(path, json=both, headers=bearer(token))
    await assert_problem(resp, 422, "validation_error")
    resp = await client.post(path, json={"ceremony_id": "x"}, headers=bearer(token))
    await assert_problem(resp, 422, "validation_error")


async def test_access_token_claims_stay_the_seeds(client: TestClient) -> None:
    """docs/reference/mfa-and-passkeys.md: nothing (no auth_time, amr ...) is added to the access
    token."""
    token, _ = await _with_passkey(client)  # a token that registered a passkey with a proof
    pair = await (await client.post("/login", json={"email": "alice@example.com",
                                                    "password": PASSWORD})).json()  # fmt: skip
    for access in (token, pair["access_token"]):
        assert set(jwt.decode(access, options={"verify_signature": False})) == SEED_CLAIMS


# Every route that confirms the password, with a body carrying a wrong one, and the status of
#  a wrong password there (docs/reference/tokens-and-sessions.md and docs/reference/accounts.md and
# docs/reference/mfa-and-passkeys.md).
CONFIRMING = {
    "change_password": ("POST", "/me/password",
                        {"old_password": "wrong password", "new_password": "a new passphrase"},
                        403),
    "delete_me": ("DELETE", "/me", {"password": "wrong password"}, 403),
    "disable_mfa": ("DELETE", "/me/mfa", {"password": "wrong password"}, 403),
    "delete_passkey": ("DELETE", "/me/passkeys/" + "0" * 32, {"password": "wrong password"}, 403),
    "passkey_options": ("POST", ADD_FACTOR[0], {"password": "wrong password"}, 401),
    "totp_enrolment": ("POST", ADD_FACTOR[1], {"password": "wrong password"}, 401),
}  # fmt: skip


@pytest.mark.parametrize("route", sorted(CONFIRMING))
async def test_wrong_passwords_count_against_the_login_throttle(
    make_client: MakeClient, route: str
) -> None:
    client = await make_client({"AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "2"})
    token = (await register_and_login(client))["access_token"]
    method, path, wrong, status = CONFIRMING[route]
    for _ in range(2):
        resp = await client.request(method, path, json=wrong, headers=bearer(token))
        assert resp.status == status, await resp.text()
    right = {**wrong, "password": PASSWORD, "old_password": PASSWORD}
    resp = await client.request(method, path, json=right, headers=bearer(token))
    await assert_problem(resp, 429, "rate_limited")  # even the right password now
    assert int(resp.headers["Retry-After"]) > 0
    login = {"email": "alice@example.com", "password": PASSWORD}
    await assert_problem(await client.post("/login", json=login), 429, "rate_limited")


async def test_the_right_password_resets_the_count(make_client: MakeClient) -> None:
    client = await make_client({"AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "2"})
    token = (await register_and_login(client))["access_token"]
    wrong, right = {"password": "wrong password"}, {"password": PASSWORD}
    for body in (wrong, right, wrong, right):
        resp = await client.post(ADD_FACTOR[1], json=body, headers=bearer(token))
        assert resp.status == (200 if body is right else 401), await resp.text()
