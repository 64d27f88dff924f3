"""Passkey registration and management over HTTP (docs/reference/mfa-and-passkeys.md), on SQLite and
PostgreSQL, with the software authenticator: register (options, then the answer), list, rename,
delete with the password; a ceremony used once and bound to its user; a refused response and a
duplicate credential; an admin's view and deletion, scoped to its organization; no key or
counter in any answer."""

from __future__ import annotations

import os
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from application.events.catalog import Event, MfaFailed
from application.login.passkey_step import PasskeyLogin
from application.shared.steps import hash_token
from tests.e2e.helpers import (
    ONE_PER_BACKEND,
    PASSWORD,
    MakeClient,
    assert_problem,
    bearer,
    container_of,
    register_and_login,
)
from tests.webauthn_authenticator import SoftAuthenticator, b64url_decode

ORIGIN = "http://localhost:8080"  # the origin of the default auth.issuer
PASSKEY_KEYS = {"id", "name", "created_at", "last_used_at", "aaguid", "backed_up", "transports",
                "suspected_clone"}  # fmt: skip


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend."""
    return request.param  # type: ignore[no-any-return]


async def options(client: TestClient, token: str) -> dict[str, Any]:
    resp = await client.post("/me/passkeys/registration/options", json={"password": PASSWORD},
                             headers=bearer(token))  # fmt: skip
    assert resp.status == 200, await resp.text()
    assert resp.headers["Cache-Control"] == "no-store"
    return await resp.json()  # type: ignore[no-any-return]


async def register(client: TestClient, token: str, device: SoftAuthenticator,
                   name: str | None = None, **kwargs: Any) -> Any:  # fmt: skip
    started = await options(client, token)
    answer = device.register(started["options"], kwargs.pop("origin", ORIGIN), **kwargs)
    body = {"ceremony_id": started["ceremony_id"], "credential": answer,
            **({"name": name} if name else {})}  # fmt: skip
    return await client.post("/me/passkeys", json=body, headers=bearer(token))


async def test_register_list_rename_and_delete(client: TestClient) -> None:
    token = (await register_and_login(client))["access_token"]
    started = await options(client, token)
    assert started["options"]["rp"]["id"] == "localhost"
    assert len(b64url_decode(started["options"]["user"]["id"])) == 32
    resp = await register(client, token, SoftAuthenticator("ES256"), "laptop")
    assert resp.status == 201, await resp.text()
    passkey = await resp.json()
    assert set(passkey) == PASSKEY_KEYS and passkey["name"] == "laptop"
    assert passkey["suspected_clone"] is False and passkey["transports"] == ["internal"]
    second = await (await register(client, token, SoftAuthenticator("EdDSA"))).json()
    listed = await (await client.get("/me/passkeys", headers=bearer(token))).json()
    assert [p["id"] for p in listed["items"]] == [second["id"], passkey["id"]]
    assert (await (await client.get("/me", headers=bearer(token))).json())["passkeys"] == 2
    assert all(set(p) == PASSKEY_KEYS for p in listed["items"])

    resp = await client.patch(f"/me/passkeys/{passkey['id']}", json={"name": "phone"},
                              headers=bearer(token))  # fmt: skip
    assert resp.status == 200 and (await resp.json())["name"] == "phone"
    resp = await client.delete(f"/me/passkeys/{passkey['id']}", json={"password": "wrong one"},
                               headers=bearer(token))  # fmt: skip
    await assert_problem(resp, 403, "invalid_old_password")
    resp = await client.delete(f"/me/passkeys/{passkey['id']}", json={"password": PASSWORD},
                               headers=bearer(token))  # fmt: skip
    assert resp.status == 204
    listed = await (await client.get("/me/passkeys", headers=bearer(token))).json()
    assert [p["id"] for p in listed["items"]] == [second["id"]]
    await assert_problem(await client.get("/me/passkeys"), 401, "invalid_token")


async def test_ceremonies_responses_and_duplicates_are_refused(client: TestClient) -> None:
    alice = (await register_and_login(client))["access_token"]
    bob = (await register_and_login(client, "bob@example.com"))["access_token"]
    started = await options(client, alice)
    answer = SoftAuthenticator("ES256").register(started["options"], ORIGIN)
    body = {"ceremony_id": started["ceremony_id"], "credential": answer}
    resp = await client.post("/me/passkeys", json=body, headers=bearer(bob))  # bob's? no
    await assert_problem(resp, 400, "invalid_ceremony")
    resp = await client.post("/me/passkeys", json=body, headers=bearer(alice))  # used up
    await assert_problem(resp, 400, "invalid_ceremony")
    resp = await register(client, alice, SoftAuthenticator("ES256"),
                          origin="https://evil.example.com")  # fmt: skip
    await assert_problem(resp, 400, "invalid_passkey")
    device = SoftAuthenticator("RS256")
    assert (await register(client, alice, device)).status == 201
    await assert_problem(await register(client, bob, device), 409, "passkey_exists")
    resp = await client.post("/me/passkeys", json={"ceremony_id": "x", "credential": "not json"},
                             headers=bearer(alice))  # fmt: skip
    await assert_problem(resp, 422, "validation_error")
    mine = await (await client.get("/me/passkeys", headers=bearer(bob))).json()
    assert mine == {"items": []}


async def test_a_credential_id_over_1023_bytes_is_refused(client: TestClient) -> None:
    """WebAuthn L3 §7.1 step 23 and docs/reference/mfa-and-passkeys.md: longer ids are refused at
    registration (400 ``invalid_passkey``) and nothing is stored; 1023 bytes are fine."""
    token = (await register_and_login(client))["access_token"]
    long_id = SoftAuthenticator("ES256", credential_id=b"\x01" * 1024)
    await assert_problem(await register(client, token, long_id), 400, "invalid_passkey")
    assert (await (await client.get("/me/passkeys", headers=bearer(token))).json())["items"] == []
    longest = SoftAuthenticator("ES256", credential_id=b"\x02" * 1023)
    assert (await register(client, token, longest)).status == 201


async def test_admins_see_and_remove_passkeys_in_their_organization(
    make_client: MakeClient,
) -> None:
    client = await make_client()
    container = container_of(client)
    await container.create_superadmin()("root@example.com", PASSWORD)
    root = (await (await client.post("/login", json={"email": "root@example.com",
                                                     "password": PASSWORD})).json())  # fmt: skip
    near = (await register_and_login(client, "near@example.com"))["access_token"]
    far = (await register_and_login(client, "far@example.com"))["access_token"]
    admin_pair = await register_and_login(client, "admin@example.com")
    await container.set_role_by_operator()("admin@example.com", "org_admin")
    await container.set_org_by_operator()("far@example.com", "globex")
    near_key = await (await register(client, near, SoftAuthenticator("ES256"))).json()
    far_key = await (await register(client, far, SoftAuthenticator("ES256"))).json()
    me_near = await (await client.get("/me", headers=bearer(near))).json()
    me_far = await (await client.get("/me", headers=bearer(far))).json()
    admin = bearer(admin_pair["access_token"])

    listed = await (await client.get(f"/users/{me_near['id']}/passkeys", headers=admin)).json()
    assert [p["id"] for p in listed["items"]] == [near_key["id"]]
    resp = await client.get(f"/users/{me_far['id']}/passkeys", headers=admin)
    await assert_problem(resp, 404, "not_found")
    resp = await client.delete(f"/users/{me_far['id']}/passkeys/{far_key['id']}", headers=admin)
    await assert_problem(resp, 404, "not_found")
    resp = await client.delete(f"/users/{me_near['id']}/passkeys/{far_key['id']}", headers=admin)
    await assert_problem(resp, 404, "not_found")  # not this user's passkey
    resp = await client.delete(f"/users/{me_near['id']}/passkeys/{near_key['id']}",
                               headers=admin)  # fmt: skip
    assert resp.status == 204
    resp = await client.delete(f"/users/{me_far['id']}/passkeys/{far_key['id']}",
                               headers=bearer(root["access_token"]))  # fmt: skip
    assert resp.status == 204
    resp = await client.get(f"/users/{me_near['id']}/passkeys", headers=bearer(near))
    await assert_problem(resp, 403, "forbidden")


async def login_options(client: TestClient, email: str | None = None) -> dict[str, Any]:
    body = {} if email is None else {"email": email}
    resp = await client.post("/login/passkey/options", json=body)
    assert resp.status == 200, await resp.text()
    return await resp.json()  # type: ignore[no-any-return]


async def passkey_login(client: TestClient, device: SoftAuthenticator, handle: bytes | None,
                        email: str | None = None, **kwargs: Any) -> Any:  # fmt: skip
    started = await login_options(client, email)
    answer = device.assert_(started["options"], ORIGIN, user_handle=handle, **kwargs)
    return await client.post("/login/passkey", json={"ceremony_id": started["ceremony_id"],
                                                     "credential": answer})  # fmt: skip


async def enrolled(client: TestClient, email: str = "alice@example.com"
                   ) -> tuple[str, SoftAuthenticator, bytes]:  # fmt: skip
    """A user with one passkey: its access token, the device and the user handle."""
    token = (await register_and_login(client, email))["access_token"]
    started = await options(client, token)
    device = SoftAuthenticator("ES256")
    answer = device.register(started["options"], ORIGIN)
    resp = await client.post("/me/passkeys", json={"ceremony_id": started["ceremony_id"],
                                                   "credential": answer}, headers=bearer(token))  # fmt: skip
    assert resp.status == 201
    return token, device, b64url_decode(started["options"]["user"]["id"])


async def test_log_in_with_a_passkey_discoverable_or_with_an_email(client: TestClient) -> None:
    _, device, handle = await enrolled(client)
    started = await login_options(client)
    assert started["options"].get("allowCredentials", []) == []
    resp = await passkey_login(client, device, handle)
    assert resp.status == 200, await resp.text()
    pair = await resp.json()
    me = await (await client.get("/me", headers=bearer(pair["access_token"]))).json()
    assert me["email"] == "alice@example.com"
    with_email = await login_options(client, "Alice@Example.com")
    assert [c["id"] for c in with_email["options"]["allowCredentials"]] == [
        device.register({"challenge": "", "rp": {"id": "x"}}, ORIGIN)["id"]
    ]
    resp = await passkey_login(client, device, None, "alice@example.com")
    assert resp.status == 200, await resp.text()
    listed = await (await client.get("/me/passkeys", headers=bearer(pair["access_token"]))).json()
    assert listed["items"][0]["last_used_at"] is not None


async def test_an_unknown_email_gets_options_of_the_same_shape(client: TestClient) -> None:
    await enrolled(client)
    known = (await login_options(client, "alice@example.com"))["options"]
    first = (await login_options(client, "nobody@example.com"))["options"]
    again = (await login_options(client, "nobody@example.com"))["options"]
    other = (await login_options(client, "someone@example.com"))["options"]
    assert set(first) == set(known)
    assert len(first["allowCredentials"]) == len(known["allowCredentials"]) == 1
    assert first["allowCredentials"] == again["allowCredentials"] != other["allowCredentials"]
    assert len(first["allowCredentials"][0]["id"]) == len(known["allowCredentials"][0]["id"])


async def test_decoy_ids_take_the_length_of_the_stored_ids(client: TestClient) -> None:
    """docs/reference/mfa-and-passkeys.md (review s5, finding 12): decoy options for an email
    without a passkey follow the length distribution of the stored credential ids — here 32 bytes,
    as Chromium's and most platform authenticators make them (decoys were 16 bytes whatever was
    stored, which told them apart); each email keeps its decoy."""
    token = (await register_and_login(client, "alice@example.com"))["access_token"]
    for _ in range(2):
        device = SoftAuthenticator("ES256", credential_id=os.urandom(32))
        assert (await register(client, token, device)).status == 201
    await register_and_login(client, "bob@example.com")  # a user without a passkey
    emails = [f"nobody{i}@example.com" for i in range(8)] + ["bob@example.com"]
    decoys = []
    for email in emails:
        (decoy,) = (await login_options(client, email))["options"]["allowCredentials"]
        decoys.append(b64url_decode(decoy["id"]))
    assert {len(d) for d in decoys} == {32}
    assert len(set(decoys)) == len(emails)
    again = (await login_options(client, emails[0]))["options"]["allowCredentials"]
    assert b64url_decode(again[0]["id"]) == decoys[0]


async def test_failed_checks_are_one_answer_and_a_ceremony_is_used_once(
    client: TestClient,
) -> None:
    _, device, handle = await enrolled(client)
    wrong = await passkey_login(client, device, handle, signer=SoftAuthenticator("ES256"))
    unknown = await passkey_login(client, SoftAuthenticator("ES256"), handle)
    body = await assert_problem(wrong, 401, "invalid_passkey")
    assert await assert_problem(unknown, 401, "invalid_passkey") == body
    started = await login_options(client)
    answer = device.assert_(started["options"], ORIGIN, user_handle=handle)
    request = {"ceremony_id": started["ceremony_id"], "credential": answer}
    assert (await client.post("/login/passkey", json=request)).status == 200
    await assert_problem(await client.post("/login/passkey", json=request), 400, "invalid_ceremony")
    # Another user's handle with this credential: refused.
    _, _, bob_handle = await enrolled(client, "bob@example.com")
    await assert_problem(await passkey_login(client, device, bob_handle), 401, "invalid_passkey")


async def test_a_counter_that_does_not_grow_flags_the_passkey(client: TestClient) -> None:
    token, device, handle = await enrolled(client)
    assert (await passkey_login(client, device, handle, count=5)).status == 200
    resp = await passkey_login(client, device, handle, count=5)  # equal, non-zero: a clone
    await assert_problem(resp, 401, "invalid_passkey")
    listed = await (await client.get("/me/passkeys", headers=bearer(token))).json()
    assert listed["items"][0]["suspected_clone"] is True
    resp = await passkey_login(client, device, handle, count=50)  # refused until deleted
    await assert_problem(resp, 401, "invalid_passkey")


async def test_throttled_disabled_and_passwordless_off(make_client: MakeClient) -> None:
    client = await make_client({"AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "2"})
    _, device, handle = await enrolled(client)
    impostor = SoftAuthenticator("ES256", credential_id=device.credential_id)
    for _ in range(2):
        await assert_problem(await passkey_login(client, impostor, handle), 401, "invalid_passkey")
    await assert_problem(await passkey_login(client, device, handle), 429, "rate_limited")
    other = await make_client({"AUTHSVC_WEBAUTHN__PASSWORDLESS": "false"})
    resp = await other.post("/login/passkey/options", json={})
    await assert_problem(resp, 403, "forbidden")


async def test_a_disabled_user_is_refused(client: TestClient) -> None:
    _, device, handle = await enrolled(client)
    await container_of(client).set_disabled_by_operator()("alice@example.com", True)
    await assert_problem(await passkey_login(client, device, handle), 403, "account_disabled")


async def with_totp_at_login(client: TestClient) -> tuple[str, SoftAuthenticator, bytes, str]:
    """alice with a passkey and a confirmed TOTP, past the password step: her access token, the
    device, the user handle and the ``mfa_token`` of ``401 mfa_required``."""
    import pyotp

    token, device, handle = await enrolled(client)
    enrolment = await (await client.post("/me/mfa/totp", json={"password": PASSWORD},
                                         headers=bearer(token))).json()  # fmt: skip
    code = pyotp.TOTP(enrolment["secret"]).now()
    resp = await client.post("/me/mfa/totp/confirm", json={"code": code}, headers=bearer(token))
    assert resp.status == 200
    login = {"email": "alice@example.com", "password": PASSWORD}
    mfa_token = (await assert_problem(await client.post("/login", json=login), 401,
                                      "mfa_required"))["mfa_token"]  # fmt: skip
    return token, device, handle, mfa_token


async def test_a_passkey_answers_mfa_required(client: TestClient) -> None:
    _, device, handle, mfa_token = await with_totp_at_login(client)
    started = await (await client.post("/login/passkey/options",
                                       json={"mfa_token": mfa_token})).json()  # fmt: skip
    assert [c["id"] for c in started["options"]["allowCredentials"]] == [
        device.register({"challenge": "", "rp": {"id": "x"}}, ORIGIN)["id"]
    ]
    answer = device.assert_(started["options"], ORIGIN, user_handle=handle)
    # The bound ceremony completes only /login/mfa with that token, not /login/passkey.
    resp = await client.post("/login/passkey", json={"ceremony_id": started["ceremony_id"],
                                                     "credential": answer})  # fmt: skip
    await assert_problem(resp, 400, "invalid_ceremony")
    started = await (await client.post("/login/passkey/options",
                                       json={"mfa_token": mfa_token})).json()  # fmt: skip
    answer = device.assert_(started["options"], ORIGIN, user_handle=handle)
    both = {"mfa_token": mfa_token, "code": "123456", "ceremony_id": started["ceremony_id"],
            "credential": answer}  # fmt: skip
    await assert_problem(await client.post("/login/mfa", json=both), 422, "validation_error")
    del both["code"]
    resp = await client.post("/login/mfa", json=both)
    assert resp.status == 200, await resp.text()
    assert (await client.post("/login/mfa", json=both)).status in (400, 401)  # used up
    # A passkey login is two factors: no mfa_required after it.
    assert (await passkey_login(client, device, handle)).status == 200
    resp = await client.post("/login/passkey/options", json={"mfa_token": "unknown"})
    await assert_problem(resp, 401, "invalid_mfa_code")


async def test_an_mfa_token_taken_meanwhile_refuses_the_passkey_and_is_recorded(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A concurrent request that uses the ``mfa_token`` between this try's claim and its login
    (simulated: the token is taken while the passkey's signature is checked) leaves this try
    refused like a wrong passkey — 401 ``invalid_mfa_code``, no tokens, the passkey's counter
    unchanged — and recorded as ``mfa.failed`` (as the TOTP step records it)."""
    token, device, handle, mfa_token = await with_totp_at_login(client)
    started = await (await client.post("/login/passkey/options",
                                       json={"mfa_token": mfa_token})).json()  # fmt: skip
    answer = device.assert_(started["options"], ORIGIN, user_handle=handle)
    container = container_of(client)
    events: list[Event] = []
    container.bus().subscribe(Event, events.append)
    checked = PasskeyLogin._verified  # the seam where a concurrent request lands

    async def taken_meanwhile(self: PasskeyLogin, *args: Any) -> Any:
        seen = await checked(self, *args)
        async with container.storage().begin() as uow:  # the concurrent request's take
            assert await uow.mfa.take_challenge(hash_token(mfa_token)) is not None
            await uow.commit()
        return seen

    monkeypatch.setattr(PasskeyLogin, "_verified", taken_meanwhile)
    body = {"mfa_token": mfa_token, "ceremony_id": started["ceremony_id"], "credential": answer}
    await assert_problem(await client.post("/login/mfa", json=body), 401, "invalid_mfa_code")
    failed = [e for e in events if isinstance(e, MfaFailed)]
    assert [(e.reason, e.user_id is not None) for e in failed] == [("wrong_passkey", True)]
    listed = (await (await client.get("/me/passkeys", headers=bearer(token))).json())["items"]
    assert listed[0]["last_used_at"] is None  # the refused try stored nothing
