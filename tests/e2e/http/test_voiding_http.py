"""Voiding over HTTP (docs/reference/accounts.md), on SQLite and PostgreSQL: a password change, a
reset, disabling and deleting void every outstanding reset token and ``mfa_token`` of the user, in
the transaction of the change; a reset token of a disabled user is refused like a used one.

Reset links come through a real SMTP server on loopback; the second step is answered with a
recovery code (valid at any time, so a refusal can only come from the voided ``mfa_token``).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pyotp
import pytest
from aiohttp.test_utils import TestClient

from application.shared.settings import EmailSettings
from application.shared.steps import new_opaque_token
from domain.model import EmailToken, EmailTokenPurpose
from tests.e2e.helpers import (
    ONE_PER_BACKEND,
    PASSWORD,
    MakeClient,
    assert_problem,
    bearer,
    container_of,
    register_and_login,
)
from tests.smtp import SmtpSink, smtp_env, smtp_server, token_of

__all__ = ["smtp_server"]  # the fixture, for pytest

ALICE = "alice@example.com"
NEW_PASSWORD = "a brand new passphrase"
RESET_SUBJECT = EmailSettings().reset_subject


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend."""
    return request.param  # type: ignore[no-any-return]


async def _client(make_client: MakeClient, port: int) -> TestClient:
    return await make_client(smtp_env(port))


async def _reset_token(client: TestClient, sink: SmtpSink, count: int = 1) -> str:
    """Ask for a reset link for Alice; the token of the ``count``-th one."""
    assert (await client.post("/password/forgot", json={"email": ALICE})).status == 202
    for _ in range(500):
        found = [m for m in sink.to(ALICE) if m["Subject"] == RESET_SUBJECT]
        if len(found) >= count:
            return token_of(found[count - 1])
        await asyncio.sleep(0.02)
    raise AssertionError("no reset message")


async def _reset(client: TestClient, token: str, password: str = NEW_PASSWORD) -> Any:
    return await client.post("/password/reset", json={"token": token, "new_password": password})


async def _with_mfa(client: TestClient) -> tuple[str, list[str]]:
    """Alice registered with MFA on: an access token (issued before MFA) and her recovery codes."""
    access = (await register_and_login(client, ALICE))["access_token"]
    resp = await client.post("/me/mfa/totp", json={"password": PASSWORD}, headers=bearer(access))
    assert resp.status == 200, await resp.text()
    code = pyotp.TOTP((await resp.json())["secret"]).now()
    resp = await client.post("/me/mfa/totp/confirm", json={"code": code}, headers=bearer(access))
    assert resp.status == 200, await resp.text()
    return access, (await resp.json())["recovery_codes"]


async def _mfa_token(client: TestClient, password: str = PASSWORD) -> str:
    resp = await client.post("/login", json={"email": ALICE, "password": password})
    return (await assert_problem(resp, 401, "mfa_required"))["mfa_token"]  # type: ignore[no-any-return]


async def _second_step(client: TestClient, mfa_token: str, code: str) -> Any:
    return await client.post("/login/mfa", json={"mfa_token": mfa_token, "code": code})


async def test_a_password_change_voids_reset_links_and_mfa_tokens(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    sink, port = smtp_server
    client = await _client(make_client, port)
    access, codes = await _with_mfa(client)
    link = await _reset_token(client, sink)
    pending = await _mfa_token(client)
    resp = await client.post("/me/password", headers=bearer(access),
                             json={"old_password": PASSWORD, "new_password": NEW_PASSWORD})  # fmt: skip
    assert resp.status == 204, await resp.text()
    await assert_problem(await _reset(client, link, "yet another one"), 400, "invalid_reset_token")
    await assert_problem(await _second_step(client, pending, codes[0]), 401, "invalid_mfa_code")
    # The recovery code was not spent: with a new mfa_token (the new password) it logs in.
    resp = await _second_step(client, await _mfa_token(client, NEW_PASSWORD), codes[0])
    assert resp.status == 200, await resp.text()


async def test_a_reset_voids_mfa_tokens(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    sink, port = smtp_server
    client = await _client(make_client, port)
    _, codes = await _with_mfa(client)
    pending = await _mfa_token(client)
    assert (await _reset(client, await _reset_token(client, sink))).status == 204
    await assert_problem(await _second_step(client, pending, codes[0]), 401, "invalid_mfa_code")


async def test_disabling_voids_reset_links_and_mfa_tokens(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    sink, port = smtp_server
    client = await _client(make_client, port)
    _, codes = await _with_mfa(client)
    link = await _reset_token(client, sink)
    pending = await _mfa_token(client)
    disable = container_of(client).set_disabled_by_operator()
    await disable(ALICE, True)
    await disable(ALICE, False)  # enabled again: the old link and mfa_token stay void
    await assert_problem(await _reset(client, link), 400, "invalid_reset_token")
    await assert_problem(await _second_step(client, pending, codes[0]), 401, "invalid_mfa_code")
    resp = await _second_step(client, await _mfa_token(client), codes[0])
    assert resp.status == 200, await resp.text()


async def test_a_disabled_users_reset_token_is_refused_like_a_used_one(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    _, port = smtp_server
    client = await _client(make_client, port)
    user_id = (await (await client.post("/register", json={"email": ALICE, "password": PASSWORD}))
               .json())["id"]  # fmt: skip
    await container_of(client).set_disabled_by_operator()(ALICE, True)
    clear, digest = new_opaque_token()  # a token that outlived the voiding (say, a race)
    now = datetime.now(UTC)
    token = EmailToken(digest, user_id, EmailTokenPurpose.RESET, now + timedelta(minutes=30), now)
    async with container_of(client).storage().begin() as uow:
        await uow.email_tokens.add(token)
        await uow.commit()
    used = await assert_problem(
        await _reset(client, "an unknown token"), 400, "invalid_reset_token"
    )
    refused = await assert_problem(await _reset(client, clear), 400, "invalid_reset_token")
    assert refused == used
    await container_of(client).set_disabled_by_operator()(ALICE, False)
    resp = await client.post("/login", json={"email": ALICE, "password": PASSWORD})
    assert resp.status == 200, await resp.text()  # the password did not change


async def test_deleting_voids_reset_links_and_mfa_tokens(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    sink, port = smtp_server
    client = await _client(make_client, port)
    access, codes = await _with_mfa(client)
    link = await _reset_token(client, sink)
    pending = await _mfa_token(client)
    resp = await client.delete("/me", json={"password": PASSWORD}, headers=bearer(access))
    assert resp.status == 204, await resp.text()
    await register_and_login(client, ALICE)  # the email registers again: a new account
    await assert_problem(await _reset(client, link), 400, "invalid_reset_token")
    await assert_problem(await _second_step(client, pending, codes[0]), 401, "invalid_mfa_code")
