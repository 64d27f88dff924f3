"""Multi-factor authentication over HTTP (docs/reference/mfa-and-passkeys.md), on SQLite and
PostgreSQL, with a controlled clock: enrol, confirm, the login's second step with a TOTP code (each
time step once) or a recovery code (each once), five wrong codes voiding the ``mfa_token``,
concurrent use of one code, turning MFA off with the password and by an admin (org-scoped), and no
secret, code or ``mfa_token`` in the logs, spans, events or the database in clear."""

from __future__ import annotations

import asyncio
import base64
import logging
import re
import sqlite3
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import attrs
import pyotp
import pytest
from aiohttp.test_utils import TestClient
from dependency_injector import providers
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from application.events.catalog import Event
from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from entrypoints.telemetry import Telemetry
from tests.e2e.helpers import ONE_PER_BACKEND, PASSWORD, assert_problem, bearer, container_of
from tests.fakes import FakeClock

ALICE = "alice@example.com"
STEP = 30  # seconds per TOTP time step (RFC 6238)


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend (MFA does not depend on the alg)."""
    return request.param  # type: ignore[no-any-return]


@attrs.define
class Mfa:
    """A client of an app whose clock the test moves, with the spans and events it produced."""

    client: TestClient
    clock: FakeClock
    spans: InMemorySpanExporter
    events: list[Event]

    async def call(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        headers = bearer(token) if token else {}
        return await self.client.request(method, path, json=body, headers=headers)

    async def ok(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        resp = await self.call(method, path, body, token)
        assert resp.status == 200, await resp.text()
        return await resp.json()

    async def register(self, email: str = ALICE) -> dict[str, Any]:
        resp = await self.call("POST", "/register", {"email": email, "password": PASSWORD})
        assert resp.status == 201, await resp.text()
        return await resp.json()  # type: ignore[no-any-return]

    async def login(self, email: str = ALICE) -> dict[str, Any]:
        return await self.ok("POST", "/login", {"email": email, "password": PASSWORD})  # type: ignore[no-any-return]

    async def challenge(self, email: str = ALICE) -> str:
        """The password step of an MFA user: 401 ``mfa_required`` with an ``mfa_token``."""
        resp = await self.call("POST", "/login", {"email": email, "password": PASSWORD})
        body = await assert_problem(resp, 401, "mfa_required")
        assert isinstance(body["mfa_token"], str) and len(body["mfa_token"]) >= 32
        return body["mfa_token"]  # type: ignore[no-any-return]

    def code(self, secret: str) -> str:
        """The TOTP code of ``secret`` at the app's current time."""
        return pyotp.TOTP(secret).at(self.clock.now())

    def next_step(self) -> None:
        self.clock.advance(STEP)

    async def enrol(self, email: str = ALICE) -> tuple[str, list[str]]:
        """Enrol the registered ``email`` and confirm with a code; returns the secret and the
        ten recovery codes (the confirming code's step is then behind the clock)."""
        access = (await self.login(email))["access_token"]
        enrolment = await self.ok("POST", "/me/mfa/totp", {"password": PASSWORD}, access)
        codes = await self.ok(
            "POST", "/me/mfa/totp/confirm", {"code": self.code(enrolment["secret"])}, access
        )
        self.next_step()  # the confirming code's step is used
        return enrolment["secret"], codes["recovery_codes"]

    async def second_step(self, mfa_token: str, code: str) -> Any:
        return await self.call("POST", "/login/mfa", {"mfa_token": mfa_token, "code": code})


MakeMfa = Callable[..., Awaitable[Mfa]]


@pytest.fixture
def make_mfa(
    aiohttp_client: Callable[..., Awaitable[TestClient]], base_env: dict[str, str]
) -> MakeMfa:
    """``await make_mfa(env)`` → an ``Mfa`` over a fresh app whose clock starts now."""

    async def make(env: dict[str, str] | None = None) -> Mfa:
        environ = {**base_env, **(env or {})}
        container = build_container(load_config(environ=environ), environ=environ)
        clock = FakeClock(datetime.now(UTC))
        exporter = InMemorySpanExporter()
        container.clock.override(providers.Object(clock))
        container.telemetry.override(Telemetry.with_exporter(exporter))
        events: list[Event] = []
        container.bus().subscribe(Event, events.append)
        client = await aiohttp_client(create_app(container))
        return Mfa(client, clock, exporter, events)

    return make


def _a_wrong_code(mfa: Mfa, secret: str) -> str:
    """Six digits that are not the code of any step within ±2 of the app's time."""
    totp, now = pyotp.TOTP(secret), mfa.clock.now().timestamp()
    near = {totp.at(now + d * STEP) for d in range(-2, 3)}
    return next(c for c in (f"{n:06d}" for n in range(1_000_000)) if c not in near)


async def test_enrol_confirm_and_log_in_with_a_code_each_step_once(make_mfa: MakeMfa) -> None:
    mfa = await make_mfa()
    await mfa.register()
    access = (await mfa.login())["access_token"]
    enrolment = await mfa.ok("POST", "/me/mfa/totp", {"password": PASSWORD}, access)
    secret = enrolment["secret"]
    assert re.fullmatch(r"[A-Z2-7]{32}", secret)
    uri = enrolment["otpauth_uri"]
    assert uri.startswith("otpauth://totp/") and f"secret={secret}" in uri
    assert "alice%40example.com" in uri or ALICE in uri
    assert "<svg" in enrolment["qr_svg"]
    # Not on yet: the password alone still logs in; a wrong code does not switch it on.
    assert "access_token" in await mfa.login()
    resp = await mfa.call("POST", "/me/mfa/totp/confirm", {"code": _a_wrong_code(mfa, secret)},
                          access)  # fmt: skip
    await assert_problem(resp, 422, "validation_error")
    codes = await mfa.ok("POST", "/me/mfa/totp/confirm", {"code": mfa.code(secret)}, access)
    recovery = codes["recovery_codes"]
    assert len(recovery) == len(set(recovery)) == 10
    assert (await mfa.ok("GET", "/me", token=access))["mfa_enabled"] is True
    resp = await mfa.call("POST", "/me/mfa/totp", {"password": PASSWORD}, access)
    await assert_problem(resp, 409, "conflict")

    mfa.next_step()
    code = mfa.code(secret)
    pair = await (await mfa.second_step(await mfa.challenge(), code)).json()
    assert (await mfa.ok("GET", "/me", token=pair["access_token"]))["email"] == ALICE
    # The same code again (same step, new mfa_token) → 401; the next step's code → tokens.
    again = await mfa.challenge()
    await assert_problem(await mfa.second_step(again, code), 401, "invalid_mfa_code")
    mfa.next_step()
    resp = await mfa.second_step(again, mfa.code(secret))
    assert resp.status == 200, await resp.text()
    # An mfa_token is single use.
    await assert_problem(await mfa.second_step(again, recovery[0]), 401, "invalid_mfa_code")
    # ±1 step: the code of the previous step is still accepted (once), two steps back is not.
    mfa.next_step()
    previous = pyotp.TOTP(secret).at(mfa.clock.now().timestamp() - STEP)
    stale = pyotp.TOTP(secret).at(mfa.clock.now().timestamp() - 2 * STEP)
    if stale != previous:
        resp = await mfa.second_step(await mfa.challenge(), stale)
        await assert_problem(resp, 401, "invalid_mfa_code")


async def test_recovery_codes_carry_at_least_112_bits_each(make_mfa: MakeMfa) -> None:
    """ASVS 5.0 6.5.2 (docs/reference/mfa-and-passkeys.md): an unsalted hash is only safe for codes
    of 112 bits or more. The codes are groups of symbols from a 32-symbol alphabet (5 bits each),
    readable (no l/o/0/1) and never six digits (which would be read as a TOTP code)."""
    mfa = await make_mfa()
    await mfa.register()
    _, recovery = await mfa.enrol()
    for code in recovery:
        symbols = code.replace("-", "")
        assert re.fullmatch(r"[a-km-np-z2-9]+", symbols), code
        assert len(symbols) * 5 >= 112, code
    resp = await mfa.second_step(await mfa.challenge(), recovery[0].upper().replace("-", " "))
    assert resp.status == 200, await resp.text()


async def test_a_recovery_code_works_once(make_mfa: MakeMfa) -> None:
    mfa = await make_mfa()
    await mfa.register()
    _, recovery = await mfa.enrol()
    resp = await mfa.second_step(await mfa.challenge(), recovery[3])
    assert resp.status == 200, await resp.text()
    resp = await mfa.second_step(await mfa.challenge(), recovery[3])
    await assert_problem(resp, 401, "invalid_mfa_code")
    resp = await mfa.second_step(await mfa.challenge(), recovery[4])
    assert resp.status == 200, await resp.text()


async def test_five_wrong_codes_void_the_mfa_token(make_mfa: MakeMfa) -> None:
    mfa = await make_mfa({"AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "50"})
    await mfa.register()
    secret, _ = await mfa.enrol()
    token = await mfa.challenge()
    wrong = _a_wrong_code(mfa, secret)
    for _ in range(5):
        await assert_problem(await mfa.second_step(token, wrong), 401, "invalid_mfa_code")
    # Voided: even the right code is refused now; a new password step gives a new token.
    await assert_problem(await mfa.second_step(token, mfa.code(secret)), 401, "invalid_mfa_code")
    resp = await mfa.second_step(await mfa.challenge(), mfa.code(secret))
    assert resp.status == 200, await resp.text()
    reasons = [e.reason for e in mfa.events if type(e).__name__ == "MfaFailed"]
    assert reasons == ["wrong_code"] * 4 + ["voided", "invalid_mfa_token"]
    metrics = await (await mfa.call("GET", "/actuator/metrics")).text()
    assert re.search(r'authsvc_logins_total\{outcome="mfa_failed"\} 6\.0', metrics)
    assert re.search(r'authsvc_logins_total\{outcome="mfa_required"\} 2\.0', metrics)


async def test_wrong_codes_feed_the_login_throttle(make_mfa: MakeMfa) -> None:
    mfa = await make_mfa({"AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "3"})
    await mfa.register()
    secret, _ = await mfa.enrol()
    token = await mfa.challenge()
    for _ in range(3):
        resp = await mfa.second_step(token, _a_wrong_code(mfa, secret))
        await assert_problem(resp, 401, "invalid_mfa_code")
    resp = await mfa.call("POST", "/login", {"email": ALICE, "password": PASSWORD})
    await assert_problem(resp, 429, "rate_limited")


async def test_concurrent_use_of_one_code_lets_exactly_one_through(make_mfa: MakeMfa) -> None:
    mfa = await make_mfa({"AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "50"})
    await mfa.register()
    secret, recovery = await mfa.enrol()
    for round_ in range(3):
        mfa.next_step()
        tokens = [await mfa.challenge() for _ in range(4)]
        code = mfa.code(secret)
        answers = await asyncio.gather(*(mfa.second_step(t, code) for t in tokens))
        assert sorted(r.status for r in answers) == [200, 401, 401, 401], round_
    tokens = [await mfa.challenge() for _ in range(4)]
    answers = await asyncio.gather(*(mfa.second_step(t, recovery[0]) for t in tokens))
    assert sorted(r.status for r in answers) == [200, 401, 401, 401]


async def test_turning_it_off_needs_the_password(make_mfa: MakeMfa) -> None:
    mfa = await make_mfa()
    await mfa.register()
    secret, _ = await mfa.enrol()
    pair = await (await mfa.second_step(await mfa.challenge(), mfa.code(secret))).json()
    access = pair["access_token"]
    resp = await mfa.call("DELETE", "/me/mfa", {"password": "not my password"}, access)
    await assert_problem(resp, 403, "invalid_old_password")
    await mfa.challenge()  # still on
    resp = await mfa.call("DELETE", "/me/mfa", {"password": PASSWORD}, access)
    assert resp.status == 204, await resp.text()
    assert "access_token" in await mfa.login()
    assert (await mfa.ok("GET", "/me", token=access))["mfa_enabled"] is False


async def test_admins_reset_mfa_in_their_organization_only(make_mfa: MakeMfa) -> None:
    mfa = await make_mfa()
    container = container_of(mfa.client)
    await container.create_superadmin()("root@example.com", PASSWORD)
    root = (await mfa.login("root@example.com"))["access_token"]
    people = {}
    for name in ("admin", "viewer", "near", "far"):
        people[name] = await mfa.register(f"{name}@example.com")
    headers = bearer(root)
    resp = await mfa.client.put(f"/users/{people['admin']['id']}/role", json={"role": "org_admin"},
                                headers=headers)  # fmt: skip
    assert resp.status == 200
    resp = await mfa.client.patch(f"/users/{people['far']['id']}", json={"org_id": "globex"},
                                  headers=headers)  # fmt: skip
    assert resp.status == 200
    for name in ("near", "far"):
        await mfa.enrol(f"{name}@example.com")
    root_secret, _ = await mfa.enrol("root@example.com")
    admin = (await mfa.login("admin@example.com"))["access_token"]
    viewer = (await mfa.login("viewer@example.com"))["access_token"]

    far, near = people["far"]["id"], people["near"]["id"]
    await assert_problem(await mfa.call("DELETE", f"/users/{far}/mfa", token=admin), 404,
                         "not_found")  # fmt: skip
    await assert_problem(await mfa.call("DELETE", f"/users/{near}/mfa", token=viewer), 403,
                         "forbidden")  # fmt: skip
    root_id = (await mfa.ok("GET", "/me", token=root))["id"]
    await assert_problem(await mfa.call("DELETE", f"/users/{root_id}/mfa", token=admin), 403,
                         "forbidden")  # fmt: skip
    await mfa.challenge("far@example.com")  # unchanged by the refusals
    await mfa.challenge("root@example.com")

    assert (await mfa.call("DELETE", f"/users/{near}/mfa", token=admin)).status == 204
    assert "access_token" in await mfa.login("near@example.com")
    assert (await mfa.call("DELETE", f"/users/{far}/mfa", token=root)).status == 204
    assert "access_token" in await mfa.login("far@example.com")
    disabled = [e for e in mfa.events if type(e).__name__ == "MfaDisabled"]
    assert [(e.user_id, e.actor_id) for e in disabled][-2:] == [
        (near, people["admin"]["id"]),
        (far, root_id),
    ]
    assert root_secret


async def test_no_secret_code_or_mfa_token_in_logs_spans_events_or_storage(
    make_mfa: MakeMfa, caplog: pytest.LogCaptureFixture, backend: str, base_env: dict[str, str]
) -> None:
    caplog.set_level(logging.DEBUG)
    mfa = await make_mfa({"AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "50"})
    await mfa.register()
    access = (await mfa.login())["access_token"]
    enrolment = await mfa.ok("POST", "/me/mfa/totp", {"password": PASSWORD}, access)
    secret = enrolment["secret"]
    first = mfa.code(secret)
    recovery = (await mfa.ok("POST", "/me/mfa/totp/confirm", {"code": first}, access))[
        "recovery_codes"
    ]
    used: list[str] = [first]
    tokens: list[str] = []
    for code in (_a_wrong_code(mfa, secret), recovery[0], recovery[0]):
        tokens.append(await mfa.challenge())
        await mfa.second_step(tokens[-1], code)
        used.append(code)
    mfa.next_step()
    tokens.append(await mfa.challenge())
    used.append(mfa.code(secret))
    assert (await mfa.second_step(tokens[-1], used[-1])).status == 200

    secrets = [secret, enrolment["otpauth_uri"], *recovery, *used, *tokens]
    logged = caplog.text
    spanned = " ".join(
        [s.name for s in mfa.spans.get_finished_spans()]
        + [str(v) for s in mfa.spans.get_finished_spans() for v in (s.attributes or {}).values()]
        + [str(v) for s in mfa.spans.get_finished_spans() for e in s.events
           for v in (e.attributes or {}).values()]
    )  # fmt: skip
    published = " ".join(repr(e) for e in mfa.events)
    assert mfa.spans.get_finished_spans() and mfa.events
    for where, text in (("logs", logged), ("spans", spanned), ("events", published)):
        assert [s for s in secrets if s in text] == [], where

    # At rest: the TOTP secret is sealed (AES-GCM), the codes and mfa_tokens hashed.
    raw_secret = base64.b32decode(secret)
    stored = await _stored_bytes(backend, base_env)
    assert ALICE.encode() in stored  # the rows were read
    for value in (secret.encode(), raw_secret, *(s.encode() for s in recovery + tokens)):
        assert value not in stored


async def _stored_bytes(backend: str, env: dict[str, str]) -> bytes:
    """Everything the database holds: the SQLite file and its WAL, or PostgreSQL's rows of
    users, MFA and the audit log."""
    if backend == "sqlite":
        path = Path(env["AUTHSVC_STORAGE__SQLITE_PATH"])
        with sqlite3.connect(path) as db:  # let the WAL be checkpointed into the file too
            db.execute("PRAGMA wal_checkpoint(FULL)")
        files = [path, path.with_name(path.name + "-wal")]
        return b"".join(p.read_bytes() for p in files if p.exists())
    conn = await asyncpg.connect(
        env["AUTHSVC_STORAGE__POSTGRES_DSN"],
        server_settings={"search_path": env["AUTHSVC_STORAGE__POSTGRES_SCHEMA"]},
    )
    try:
        chunks = []
        for table in ("users", "mfa_totp", "mfa_recovery_codes", "mfa_challenges", "audit_events"):
            for row in await conn.fetch(f"SELECT * FROM {table}"):
                for value in row.values():
                    chunks.append(value if isinstance(value, bytes) else str(value).encode())
        return b"\n".join(chunks)
    finally:
        await conn.close()
