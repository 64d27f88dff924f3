"""Passkey login checked in WebAuthn L3 §7.2's order over HTTP (docs/reference/mfa-and-passkeys.md,
issue 29 point 1), on SQLite and PostgreSQL: a forged assertion (a garbage signature, a lower
counter) is refused and flags nothing — only a validly signed regression flags the passkey; a
discoverable assertion needs the passkey owner's ``userHandle``."""

from __future__ import annotations

import os
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from domain.audit import AuditEvent, AuditQuery
from tests.e2e.helpers import ONE_PER_BACKEND, assert_problem, bearer, container_of
from tests.e2e.http.test_passkeys_http import enrolled, passkey_login
from tests.webauthn_authenticator import SoftAuthenticator


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend."""
    return request.param  # type: ignore[no-any-return]


async def _flagged(client: TestClient, token: str) -> bool:
    listed = await (await client.get("/me/passkeys", headers=bearer(token))).json()
    return listed["items"][0]["suspected_clone"]  # type: ignore[no-any-return]


async def _rows(client: TestClient, type_: str) -> list[AuditEvent]:
    async with container_of(client).storage().read() as uow:
        return await uow.audit.list_page(AuditQuery(type=type_), None, 100)


async def test_a_forged_assertion_with_a_lower_counter_flags_nothing(client: TestClient) -> None:
    token, device, handle = await enrolled(client)
    assert (await passkey_login(client, device, handle, count=5)).status == 200
    forger = SoftAuthenticator("ES256")  # knows the credential id and the handle, not the key
    for count in (1, 5, 0):
        resp = await passkey_login(client, device, handle, count=count, signer=forger)
        await assert_problem(resp, 401, "invalid_passkey")
    assert await _flagged(client, token) is False
    assert await _rows(client, "passkey.clone_suspected") == []
    assert (await passkey_login(client, device, handle, count=6)).status == 200


async def test_a_validly_signed_regression_still_flags(client: TestClient) -> None:
    token, device, handle = await enrolled(client)
    assert (await passkey_login(client, device, handle, count=5)).status == 200
    resp = await passkey_login(client, device, handle, count=3)  # the real key: a clone
    await assert_problem(resp, 401, "invalid_passkey")
    assert await _flagged(client, token) is True
    assert len(await _rows(client, "passkey.clone_suspected")) == 1
    await assert_problem(await passkey_login(client, device, handle, count=9), 401,
                         "invalid_passkey")  # fmt: skip


async def test_a_discoverable_assertion_needs_the_owners_user_handle(client: TestClient) -> None:
    token, device, handle = await enrolled(client)
    _, _, bob_handle = await enrolled(client, "bob@example.com")
    for given in (None, bob_handle, os.urandom(32)):  # missing, another user's, unknown
        await assert_problem(await passkey_login(client, device, given), 401, "invalid_passkey")
    # With an email the user is known: userHandle may be left out, but never be another's.
    resp = await passkey_login(client, device, bob_handle, "alice@example.com")
    await assert_problem(resp, 401, "invalid_passkey")
    assert (await passkey_login(client, device, None, "alice@example.com")).status == 200
    assert (await passkey_login(client, device, handle)).status == 200
    assert await _flagged(client, token) is False


async def test_a_user_handle_that_is_not_base64url_is_refused(client: TestClient) -> None:
    _, device, handle = await enrolled(client)
    started = await (await client.post("/login/passkey/options", json={})).json()
    answer: dict[str, Any] = device.assert_(started["options"], "http://localhost:8080",
                                            user_handle=handle)  # fmt: skip
    answer["response"]["userHandle"] = "*not base64*"
    resp = await client.post("/login/passkey", json={"ceremony_id": started["ceremony_id"],
                                                     "credential": answer})  # fmt: skip
    await assert_problem(resp, 401, "invalid_passkey")
