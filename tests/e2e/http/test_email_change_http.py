"""Changing the email (docs/reference/accounts.md, "Changing the email"; ADR 0043) over HTTP,
on SQLite and PostgreSQL, with a real SMTP server: the JSON API (``POST /me/email``, ``POST
/email/change``) and the account page's form and link page. The link goes to the NEW address;
the answer is the same whether or not the address is taken; confirming moves the account
(verified), tells the OLD address, and is audited; a wrong password, a used link, a taken
address or a missing CSRF token change nothing."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient

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
from tests.e2e.oidc_helpers import ORIGIN, csrf_of, sign_in
from tests.smtp import SmtpSink, smtp_env, smtp_server, text_of, token_of

__all__ = ["smtp_server"]  # the fixture, for pytest

ALICE, NEW, BOB = "alice@example.com", "alice@new.example", "bob@example.com"


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend."""
    return request.param  # type: ignore[no-any-return]


async def _mail_client(make_client: MakeClient, port: int) -> TestClient:
    return await make_client({**smtp_env(port), "AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "10"})


async def _audit_types(client: TestClient) -> list[str]:
    async with container_of(client).storage().read() as uow:
        page = await uow.audit.list_page(AuditQuery(), None, 200)
    return [e.type for e in page]


async def test_the_json_api_changes_the_email_by_a_link_to_the_new_address(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    sink, port = smtp_server
    client = await _mail_client(make_client, port)
    token = (await register_and_login(client))["access_token"]
    me = bearer(token)
    for body, status, code in (
        ({"new_email": NEW, "password": "not my password"}, 403, "invalid_old_password"),
        ({"new_email": "not an address", "password": PASSWORD}, 422, "validation_error"),
        ({"new_email": "ALICE@example.com", "password": PASSWORD}, 422, "validation_error"),
    ):
        await assert_problem(await client.post("/me/email", json=body, headers=me), status, code)
    resp = await client.post("/me/email", json={"new_email": NEW, "password": PASSWORD})
    await assert_problem(resp, 401, "invalid_token")
    resp = await client.post("/me/email", json={"new_email": NEW, "password": PASSWORD},
                             headers=me)  # fmt: skip
    assert resp.status == 202
    link = await sink.wait_for(NEW)
    assert link["To"] == NEW and "/ui/account/email/confirm?token=" in text_of(link)
    assert (await (await client.get("/me", headers=me)).json())["email"] == ALICE  # not yet
    await assert_problem(await client.post("/email/change", json={"token": "nope"}), 400,
                         "invalid_verification_token")  # fmt: skip
    assert (await client.post("/email/change", json={"token": token_of(link)})).status == 204
    profile = await (await client.get("/me", headers=me)).json()
    assert profile["email"] == NEW and profile["email_verified"] is True
    notice = await sink.wait_for(ALICE, 2)  # the first one was the verification at sign-up
    assert NEW in text_of(notice)
    resp = await client.post("/email/change", json={"token": token_of(link)})  # used up
    await assert_problem(resp, 400, "invalid_verification_token")
    assert (await client.post("/login", json={"email": NEW, "password": PASSWORD})).status == 200
    resp = await client.post("/login", json={"email": ALICE, "password": PASSWORD})
    await assert_problem(resp, 401, "invalid_credentials")
    types = await _audit_types(client)
    assert "email.change_requested" in types and "email.changed" in types
    assert "alice" not in str([t for t in types if t.startswith("email.")])


async def test_a_taken_address_gets_the_same_answer_and_the_link_then_fails(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    """No enumeration: asking for an address another account holds answers 202 like any other
    and mails the link there; opening it fails with 409 ``email_taken`` and changes nothing."""
    sink, port = smtp_server
    client = await _mail_client(make_client, port)
    token = (await register_and_login(client))["access_token"]
    await register_and_login(client, BOB)
    resp = await client.post("/me/email", json={"new_email": BOB, "password": PASSWORD},
                             headers=bearer(token))  # fmt: skip
    assert resp.status == 202
    link = await sink.wait_for(BOB, 2)  # after bob's own verification mail
    resp = await client.post("/email/change", json={"token": token_of(link)})
    await assert_problem(resp, 409, "email_taken")
    assert (await (await client.get("/me", headers=bearer(token))).json())["email"] == ALICE


async def test_the_account_page_changes_the_email(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    """The form (a wrong password 403, no CSRF token 403) → "check your new address"; the
    link's page changes nothing by itself (GET); its button does."""
    sink, port = smtp_server
    client = await _mail_client(make_client, port)
    token = (await register_and_login(client))["access_token"]
    await sign_in(client, "/ui/account")
    page = await client.get("/ui/account/email", allow_redirects=False)
    assert page.status == 200 and ALICE in await page.text()
    form = {"new_email": NEW, "password": "not my password", "csrf_token": csrf_of(client)}
    resp = await client.post("/ui/account/email", data=form, headers=ORIGIN,
                             allow_redirects=False)  # fmt: skip
    assert resp.status == 403
    form["password"] = PASSWORD
    resp = await client.post("/ui/account/email", data={**form, "csrf_token": ""},
                             headers=ORIGIN, allow_redirects=False)  # fmt: skip
    assert resp.status == 403 and not sink.to(NEW)
    resp = await client.post("/ui/account/email", data=form, headers=ORIGIN,
                             allow_redirects=False)  # fmt: skip
    assert resp.status == 303 and resp.headers["Location"] == "/ui/account/email/sent"
    assert "Check your new address" in await (await client.get("/ui/account/email/sent")).text()
    clear = token_of(await sink.wait_for(NEW))
    landing = await client.get("/ui/account/email/confirm", params={"token": clear})
    assert landing.status == 200 and clear in await landing.text()
    assert (await (await client.get("/me", headers=bearer(token))).json())["email"] == ALICE
    confirm = {"token": clear, "csrf_token": csrf_of(client)}
    resp = await client.post("/ui/account/email/confirm", data=confirm, headers=ORIGIN,
                             allow_redirects=False)  # fmt: skip
    assert resp.status == 303 and resp.headers["Location"] == "/ui/account/email/changed"
    profile = await (await client.get("/me", headers=bearer(token))).json()
    assert profile["email"] == NEW and profile["email_verified"] is True
    resp = await client.post("/ui/account/email/confirm", data=confirm, headers=ORIGIN,
                             allow_redirects=False)  # fmt: skip
    assert resp.status == 400 and "not valid any more" in await resp.text()
