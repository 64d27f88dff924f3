"""Who the login and refresh audit rows name, over HTTP (docs/reference/operations.md; issue 29
point 9), on SQLite and PostgreSQL: ``config.changed`` names the superadmin who called ``POST
/actuator/refresh``; ``login.failed`` and ``login.rate_limited`` name the account of the email tried
when it exists, and nobody for an unknown email (with the same answers); a passkey login to a
disabled or unverified account is refused like a password login, with a ``login.failed`` row of
method ``passkey``."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from domain.audit import AuditEvent, AuditQuery
from tests.e2e.helpers import (
    ONE_PER_BACKEND,
    PASSWORD,
    MakeClient,
    assert_problem,
    bearer,
    container_of,
)
from tests.e2e.http.test_passkeys_http import enrolled, passkey_login


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend."""
    return request.param  # type: ignore[no-any-return]


async def _rows(client: TestClient, type_: str) -> list[AuditEvent]:
    """The rows of ``type_``, newest first."""
    async with container_of(client).storage().read() as uow:
        return await uow.audit.list_page(AuditQuery(type=type_), None, 1000)


async def _user_id(client: TestClient, email: str) -> str:
    async with container_of(client).storage().read() as uow:
        user = await uow.users.get_by_email(email)
    assert user is not None
    return user.id


async def test_config_changed_names_the_superadmin_who_refreshed(
    make_client: MakeClient, tmp_path: Path
) -> None:
    path = tmp_path / "authsvc.toml"
    path.write_text("[auth]\naccess_token_ttl = 900\n", encoding="utf-8")
    client = await make_client(config_path=str(path))
    root = await container_of(client).create_superadmin()("root@example.com", PASSWORD)
    resp = await client.post("/login", json={"email": "root@example.com", "password": PASSWORD})
    token = (await resp.json())["access_token"]
    path.write_text("[auth]\naccess_token_ttl = 300\n", encoding="utf-8")
    resp = await client.post("/actuator/refresh", headers=bearer(token))
    assert resp.status == 200, await resp.text()
    [changed] = await _rows(client, "config.changed")
    assert (changed.actor_id, changed.user_id) == (root.user.id, None)
    assert changed.details_dict() == {"changed": "auth"}


async def test_failed_and_throttled_logins_name_the_account_of_the_email(
    make_client: MakeClient,
) -> None:
    client = await make_client({"AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "2"})
    resp = await client.post("/register", json={"email": "alice@example.com",
                                                "password": PASSWORD})  # fmt: skip
    alice = (await resp.json())["id"]
    answers = []
    for email in ("Alice@Example.com", "nobody@example.com"):
        for status, code in ((401, "invalid_credentials"),) * 2 + ((429, "rate_limited"),):
            resp = await client.post("/login", json={"email": email, "password": "wrong one"})
            body = await assert_problem(resp, status, code)
            answers.append((body["code"], body["detail"] if status == 401 else None))
    assert answers[:3] == answers[3:]  # the same answers for a known and an unknown email
    failed = await _rows(client, "login.failed")
    assert [(r.user_id, r.details_dict()["reason"]) for r in reversed(failed)] == [
        (alice, "wrong_password"),
        (alice, "wrong_password"),
        (None, "unknown_email"),
        (None, "unknown_email"),
    ]
    limited = await _rows(client, "login.rate_limited")
    assert [r.user_id for r in reversed(limited)] == [alice, None]


async def test_a_passkey_login_to_a_disabled_account_is_refused_and_recorded(
    client: TestClient,
) -> None:
    _, device, handle = await enrolled(client)
    alice = await _user_id(client, "alice@example.com")
    await container_of(client).set_disabled_by_operator()("alice@example.com", True)
    logins = await _rows(client, "login.succeeded")
    await assert_problem(await passkey_login(client, device, handle), 403, "account_disabled")
    [failed] = await _rows(client, "login.failed")
    assert failed.user_id == alice
    assert failed.details_dict() == {"reason": "account_disabled", "method": "passkey"}
    assert await _rows(client, "login.succeeded") == logins


async def test_a_passkey_login_to_an_unverified_account_is_refused_and_recorded(
    make_client: MakeClient,
) -> None:
    client = await make_client()
    _, device, handle = await enrolled(client)
    verified_only = await make_client({"AUTHSVC_AUTH__REQUIRE_VERIFIED_EMAIL": "true"})
    resp = await passkey_login(verified_only, device, handle)
    await assert_problem(resp, 403, "email_not_verified")
    [failed] = await _rows(verified_only, "login.failed")
    assert failed.user_id == await _user_id(client, "alice@example.com")
    assert failed.details_dict() == {"reason": "email_not_verified", "method": "passkey"}


async def test_the_mfa_step_of_an_account_disabled_meanwhile_is_refused(
    client: TestClient,
) -> None:
    import pyotp

    token, _, _ = await enrolled(client)
    resp = await client.post("/me/mfa/totp", json={"password": PASSWORD}, headers=bearer(token))
    enrolment = await resp.json()
    code = pyotp.TOTP(enrolment["secret"]).now()
    resp = await client.post("/me/mfa/totp/confirm", json={"code": code}, headers=bearer(token))
    recovery = (await resp.json())["recovery_codes"]
    login = {"email": "alice@example.com", "password": PASSWORD}
    mfa_token = (await assert_problem(await client.post("/login", json=login), 401,
                                      "mfa_required"))["mfa_token"]  # fmt: skip
    await container_of(client).set_disabled_by_operator()("alice@example.com", True)
    resp = await client.post("/login/mfa", json={"mfa_token": mfa_token, "code": recovery[0]})
    # Disabling voided the pending second step (docs/reference/accounts.md): the right code gets the
    # answer of a used mfa_token, and no session starts.
    await assert_problem(resp, 401, "invalid_mfa_code")
    methods = [e.details_dict()["method"] for e in await _rows(client, "login.succeeded")]
    assert methods == ["password"]  # the login that enrolled, and no second step


async def test_a_throttled_passkey_login_names_the_owner_of_the_credential(
    make_client: MakeClient,
) -> None:
    from tests.webauthn_authenticator import SoftAuthenticator

    client = await make_client({"AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "2"})
    _, device, handle = await enrolled(client)
    impostor = SoftAuthenticator("ES256", credential_id=device.credential_id)
    for _ in range(2):
        await assert_problem(await passkey_login(client, impostor, handle), 401, "invalid_passkey")
    await assert_problem(await passkey_login(client, device, handle), 429, "rate_limited")
    [limited] = await _rows(client, "login.rate_limited")
    assert limited.user_id == await _user_id(client, "alice@example.com")
