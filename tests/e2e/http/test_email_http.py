"""Email verification and password reset over HTTP with real SMTP (docs/reference/accounts.md): the
real app sends through an aiosmtpd server on loopback; on SQLite and PostgreSQL (one signing
algorithm: the mail does not depend on it)."""

from __future__ import annotations

import asyncio
import email.message
import logging
import re
import time
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.helpers import ONE_PER_BACKEND, PASSWORD, MakeClient, assert_problem, bearer
from tests.smtp import SmtpSink, free_port, smtp_env, smtp_server, text_of, token_of

__all__ = ["smtp_server"]  # the fixture, for pytest

NEW_PASSWORD = "a brand new passphrase"
ALICE = "alice@example.com"
FROM = "accounts@auth.example.org"
VERIFY_SUBJECT = "Confirm your address at Example"
RESET_SUBJECT = "Reset your Example password"
VERIFY_URL = "https://app.example.org/verify?token={token}"
RESET_URL = "https://app.example.org/reset?token={token}"
LINK_TOKEN = re.compile(r"[?&]token=([A-Za-z0-9_-]+)")


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: email tests run once per storage backend, with RS256."""
    return request.param  # type: ignore[no-any-return]


async def mail_client(make_client: MakeClient, port: int, **env: str) -> TestClient:
    """A client of an app sending through the SMTP server on ``port`` (custom from, subjects
    and links), with ``env`` (``AUTH__LOGIN_MAX_FAILURES="3"`` ...) on top."""
    return await make_client({
        **smtp_env(port),
        "AUTHSVC_EMAIL__FROM_ADDRESS": FROM,
        "AUTHSVC_EMAIL__VERIFY_SUBJECT": VERIFY_SUBJECT,
        "AUTHSVC_EMAIL__RESET_SUBJECT": RESET_SUBJECT,
        "AUTHSVC_EMAIL__VERIFY_URL": VERIFY_URL,
        "AUTHSVC_EMAIL__RESET_URL": RESET_URL,
        **{f"AUTHSVC_{key}": value for key, value in env.items()},
    })  # fmt: skip


async def register(client: TestClient, address: str = ALICE) -> dict[str, Any]:
    resp = await client.post("/register", json={"email": address, "password": PASSWORD})
    assert resp.status == 201, await resp.text()
    return await resp.json()  # type: ignore[no-any-return]


async def login(
    client: TestClient, address: str = ALICE, password: str = PASSWORD
) -> aiohttp.ClientResponse:
    return await client.post("/login", json={"email": address, "password": password})


async def tokens(client: TestClient, address: str = ALICE) -> dict[str, Any]:
    """A successful login's TokenPair."""
    resp = await login(client, address)
    assert resp.status == 200, await resp.text()
    return await resp.json()  # type: ignore[no-any-return]


async def forgot(client: TestClient, address: str = ALICE) -> aiohttp.ClientResponse:
    return await client.post("/password/forgot", json={"email": address})


async def verify(client: TestClient, token: str) -> aiohttp.ClientResponse:
    return await client.post("/email/verify", json={"token": token})


async def reset(
    client: TestClient, token: str, password: str = NEW_PASSWORD
) -> aiohttp.ClientResponse:
    return await client.post("/password/reset", json={"token": token, "new_password": password})


async def me(client: TestClient, access: str) -> dict[str, Any]:
    resp = await client.get("/me", headers=bearer(access))
    assert resp.status == 200, await resp.text()
    return await resp.json()  # type: ignore[no-any-return]


async def mail(
    sink: SmtpSink, subject: str, address: str = ALICE, count: int = 1, within: float = 10.0
) -> email.message.EmailMessage:
    """The ``count``-th message with ``subject`` to ``address``, waiting for it."""

    def matching() -> list[email.message.EmailMessage]:
        return [m for m in sink.to(address) if m["Subject"] == subject]

    async with asyncio.timeout(within):
        while len(matching()) < count:
            await asyncio.sleep(0.02)
    return matching()[count - 1]


# --------------------------------------------------------------------------- verification


async def test_register_mails_a_verification_link_that_verifies_once(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    sink, port = smtp_server
    client = await mail_client(make_client, port)
    user = await register(client)
    assert user["email_verified"] is False
    message = await mail(sink, VERIFY_SUBJECT)
    assert message["From"] == FROM and message["To"] == ALICE
    assert sink.envelopes[-1] == (FROM, [ALICE])
    assert message.get_content_type() == "multipart/alternative"
    html_part = message.get_body(preferencelist=("html",))
    assert html_part is not None and html_part.get_content_type() == "text/html"
    token = token_of(message)
    assert len(token) >= 43  # 256 bits, URL-safe base64
    assert VERIFY_URL.format(token=token) in text_of(message)
    assert VERIFY_URL.format(token=token) in html_part.get_content()

    access = (await tokens(client))["access_token"]
    assert (await me(client, access))["email_verified"] is False
    resp = await verify(client, token)
    assert resp.status == 204, await resp.text()
    assert (await me(client, access))["email_verified"] is True
    await assert_problem(await verify(client, token), 400, "invalid_verification_token")
    await assert_problem(await verify(client, "A" * 43), 400, "invalid_verification_token")


async def test_resend_mails_a_new_link_and_voids_the_older(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    sink, port = smtp_server
    client = await mail_client(make_client, port)
    await register(client)
    first = token_of(await mail(sink, VERIFY_SUBJECT))
    access = (await tokens(client))["access_token"]
    resp = await client.post("/me/email/verify", headers=bearer(access))
    assert resp.status == 202, await resp.text()
    second = token_of(await mail(sink, VERIFY_SUBJECT, count=2))
    assert second != first
    await assert_problem(await verify(client, first), 400, "invalid_verification_token")
    assert (await verify(client, second)).status == 204
    assert (await me(client, access))["email_verified"] is True


async def test_required_verification_refuses_login_until_verified(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    sink, port = smtp_server
    client = await mail_client(make_client, port, AUTH__REQUIRE_VERIFIED_EMAIL="true")
    await register(client)
    await assert_problem(await login(client), 403, "email_not_verified")
    await assert_problem(await login(client, password="wrong password"), 401,
                         "invalid_credentials")  # fmt: skip
    assert (await verify(client, token_of(await mail(sink, VERIFY_SUBJECT)))).status == 204
    assert (await login(client)).status == 200


# --------------------------------------------------------------------------- password reset


async def test_reset_sets_the_password_ends_sessions_and_verifies(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    sink, port = smtp_server
    client = await mail_client(make_client, port)
    await register(client)
    await mail(sink, VERIFY_SUBJECT)  # unused: the reset verifies the email too
    old = await tokens(client)
    resp = await forgot(client)
    assert resp.status == 202 and await resp.read() == b""
    message = await mail(sink, RESET_SUBJECT)
    assert message["From"] == FROM and message.get_body(preferencelist=("html",)) is not None
    token = token_of(message)
    assert RESET_URL.format(token=token) in text_of(message)

    await assert_problem(await reset(client, token, "short"), 422, "validation_error")
    resp = await reset(client, token)  # the refused password did not spend the token
    assert resp.status == 204, await resp.text()
    resp = await client.post("/refresh", json={"refresh_token": old["refresh_token"]})
    await assert_problem(resp, 401, "invalid_refresh_token")
    await assert_problem(await login(client), 401, "invalid_credentials")
    resp = await login(client, password=NEW_PASSWORD)
    assert resp.status == 200, await resp.text()
    access = (await resp.json())["access_token"]
    resp = await client.get("/me/sessions", headers=bearer(access))
    assert resp.status == 200 and len((await resp.json())["items"]) == 1
    await assert_problem(await reset(client, token, "yet another passphrase"), 400,
                         "invalid_reset_token")  # fmt: skip
    assert (await me(client, access))["email_verified"] is True


async def test_a_newer_forgot_voids_the_older_link(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    sink, port = smtp_server
    client = await mail_client(make_client, port)
    await register(client)
    assert (await forgot(client)).status == 202
    first = token_of(await mail(sink, RESET_SUBJECT))
    assert (await forgot(client)).status == 202
    second = token_of(await mail(sink, RESET_SUBJECT, count=2))
    await assert_problem(await reset(client, first), 400, "invalid_reset_token")
    assert (await reset(client, second)).status == 204
    assert (await login(client, password=NEW_PASSWORD)).status == 200


async def test_a_reset_token_is_spent_once_under_concurrency(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    sink, port = smtp_server
    client = await mail_client(make_client, port)
    await register(client)
    assert (await forgot(client)).status == 202
    token = token_of(await mail(sink, RESET_SUBJECT))
    answers = await asyncio.gather(*(reset(client, token, f"{NEW_PASSWORD} {i}") for i in range(4)))
    assert sorted(r.status for r in answers) == [204, 400, 400, 400]
    winner = next(i for i, r in enumerate(answers) if r.status == 204)
    assert (await login(client, password=f"{NEW_PASSWORD} {winner}")).status == 200


async def test_forgot_answers_unknown_emails_alike_and_mails_nothing(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    sink, port = smtp_server
    client = await mail_client(make_client, port)
    await register(client)
    await mail(sink, VERIFY_SUBJECT)
    known = await forgot(client)
    unknown = await forgot(client, "nobody@example.com")
    assert known.status == unknown.status == 202
    assert await known.read() == await unknown.read() == b""
    names = [{k.lower() for k in r.headers} - {"date"} for r in (known, unknown)]
    assert names[0] == names[1], names
    for header in ("Content-Length", "Content-Type"):
        assert known.headers.get(header) == unknown.headers.get(header)
    await mail(sink, RESET_SUBJECT)
    await asyncio.sleep(0.5)  # time enough for a message to the unknown address to arrive
    assert sink.to("nobody@example.com") == []
    assert all("nobody@example.com" not in rcpts for _, rcpts in sink.envelopes)
    await assert_problem(await forgot(client, "not an email"), 422, "validation_error")


async def test_forgot_and_resend_are_throttled(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    _, port = smtp_server
    client = await mail_client(make_client, port, AUTH__LOGIN_MAX_FAILURES="3")
    await register(client)
    assert [(await forgot(client)).status for _ in range(3)] == [202, 202, 202]
    resp = await forgot(client)
    await assert_problem(resp, 429, "rate_limited")
    assert int(resp.headers["Retry-After"]) > 0
    assert (await forgot(client, "someone.else@example.com")).status == 202  # per email

    access = (await tokens(client))["access_token"]
    statuses = []
    for _ in range(3):
        statuses.append((await client.post("/me/email/verify", headers=bearer(access))).status)
    assert statuses == [202, 202, 202]
    resp = await client.post("/me/email/verify", headers=bearer(access))
    await assert_problem(resp, 429, "rate_limited")
    assert int(resp.headers["Retry-After"]) > 0


async def test_an_expired_reset_link_changes_nothing(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    sink, port = smtp_server
    client = await mail_client(make_client, port, AUTH__PASSWORD_RESET_TTL="1")
    await register(client)
    assert (await forgot(client)).status == 202
    answered = time.monotonic()  # the token was made before the answer: it expires by +1 s
    token = token_of(await mail(sink, RESET_SUBJECT))
    await asyncio.sleep(max(0.0, answered + 1.25 - time.monotonic()))
    await assert_problem(await reset(client, token), 400, "invalid_reset_token")
    assert (await login(client)).status == 200
    await assert_problem(await login(client, password=NEW_PASSWORD), 401, "invalid_credentials")


# --------------------------------------------------------------------------- delivery


def emails_sent(body: str) -> dict[tuple[str, str], float]:
    """``{(kind, outcome): value}`` of ``authsvc_emails_sent_total`` in a metrics body."""
    return {
        (s.labels["kind"], s.labels["outcome"]): s.value
        for family in text_string_to_metric_families(body)
        for s in family.samples
        if s.name == "authsvc_emails_sent_total"
    }


async def test_a_down_smtp_server_changes_no_answer_and_counts_failures(
    make_client: MakeClient,
) -> None:
    client = await mail_client(make_client, free_port())  # nothing listens there
    user = await register(client)
    assert user["email"] == ALICE
    resp = await forgot(client)
    assert resp.status == 202 and await resp.read() == b""
    counts: dict[tuple[str, str], float] = {}
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        resp = await client.get("/actuator/metrics")
        assert resp.status == 200
        counts = emails_sent(await resp.text())
        if counts.get(("verify", "failed"), 0) >= 1 and counts.get(("reset", "failed"), 0) >= 1:
            break
        await asyncio.sleep(0.1)
    assert counts.get(("verify", "failed"), 0) >= 1, counts
    assert counts.get(("reset", "failed"), 0) >= 1, counts
    assert counts.get(("verify", "sent"), 0) == counts.get(("reset", "sent"), 0) == 0


def service_log(caplog: pytest.LogCaptureFixture) -> str:
    """Every record captured, formatted (exceptions included), but those of aiosmtpd (the
    test's SMTP server, logger ``mail.log``), which is not the service."""
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    return "\n".join(formatter.format(r) for r in caplog.records if not r.name.startswith("mail."))


async def test_no_token_in_the_log_with_smtp(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="authsvc")
    sink, port = smtp_server
    client = await mail_client(make_client, port)
    await register(client)
    verify_token = token_of(await mail(sink, VERIFY_SUBJECT))
    assert (await verify(client, verify_token)).status == 204
    assert (await forgot(client)).status == 202
    reset_token = token_of(await mail(sink, RESET_SUBJECT))
    assert (await reset(client, reset_token)).status == 204
    await asyncio.sleep(0.2)  # the outbox's events, logged after the send
    logged = service_log(caplog)
    assert any(r.name.startswith("authsvc") for r in caplog.records)  # the capture works
    assert verify_token not in logged and reset_token not in logged


async def test_console_backend_logs_a_link_that_verifies(
    make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="authsvc.email")
    client = await make_client()  # email.backend = console, the default
    await register(client)
    found: list[str] = []
    deadline = time.monotonic() + 10
    while not found and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
        found = [
            r.getMessage() for r in caplog.records
            if r.name == "authsvc.email" and ALICE in r.getMessage() and "token=" in r.getMessage()
        ]  # fmt: skip
    assert found, caplog.text
    assert "http://localhost:8080/ui/verify?token=" in found[0]
    match = LINK_TOKEN.search(found[0])
    assert match is not None
    assert (await verify(client, match.group(1))).status == 204
    access = (await tokens(client))["access_token"]
    assert (await me(client, access))["email_verified"] is True
