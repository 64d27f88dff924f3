"""Limits that a burst must not slip past (issue 29 point 2; docs/reference/mfa-and-passkeys.md): 50
guesses sent at once, over ``authsvc serve --workers 2`` (SQLite and PostgreSQL) and over two
instances on one PostgreSQL schema, see at most the limit *evaluated*:

- 50 wrong passwords for one email: at most ``auth.login_max_failures`` answers 401
  ``invalid_credentials`` (and as many ``login.failed`` audit rows); the rest 429;
- 50 wrong codes on one ``mfa_token`` with the throttle out of the way: at most five are
  checked (``mfa.failed`` rows ``wrong_code`` / ``voided``), and the token is void after;
- 50 wrong codes on one ``mfa_token`` under a throttle of three: at most three 401s, the rest
  429.

Before the fix (read the count, check it, then write a failure) 7 of these 9 failed: every
request read the count before the others had written their failures, so 48 to 50 wrong
passwords and 18 to 40 wrong codes were evaluated. (The two code bursts on SQLite held by luck
there: a TOTP check is too quick for two readers to meet between the read and the write.)
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pyotp
import pytest

from tests.e2e.processes.test_processes import Database
from tests.e2e.servers import Server, server_env

pytestmark = pytest.mark.slow

PASSWORD = "correct horse battery"
BURST = 50
TOPOLOGIES = [
    ("sqlite", "workers"),
    pytest.param(("postgres", "workers"), marks=pytest.mark.postgres),
    pytest.param(("postgres", "instances"), marks=pytest.mark.postgres),
]


@pytest.fixture(params=TOPOLOGIES, ids=lambda t: "-".join(t))
def topology(request: pytest.FixtureRequest) -> tuple[str, str]:
    """(storage backend, ``workers``: one ``serve --workers 2`` | ``instances``: two
    ``serve`` processes on one database)."""
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def backend(topology: tuple[str, str]) -> str:
    """Overrides the e2e ``backend``, so ``storage_env`` follows the topology."""
    return topology[0]


class Service:
    """The processes of one deployment and a look at its database."""

    def __init__(self, servers: list[Server], env: dict[str, str]) -> None:
        self.servers = servers
        self.db = Database(env)

    def base(self, n: int) -> str:
        """The base URL for the ``n``-th request: the instances take turns."""
        return self.servers[n % len(self.servers)].base

    def audit(self, event_type: str) -> list[dict[str, Any]]:
        """The ``details`` of every audit row of ``event_type``."""
        rows = self.db.rows("SELECT details FROM audit_events WHERE type = ?", event_type)
        return [d if isinstance(d, dict) else json.loads(d or "{}") for (d,) in rows]


@pytest.fixture
def start(tmp_path: Path, storage_env: dict[str, str], topology: tuple[str, str]) -> Iterator[Any]:
    """``start(max_failures)``: the deployment with ``auth.login_max_failures`` set."""
    started: list[Server] = []

    def _start(max_failures: int) -> Service:
        settings = {"AUTHSVC_AUTH__LOGIN_MAX_FAILURES": str(max_failures)}
        if topology[1] == "workers":
            env = server_env(tmp_path, storage_env, AUTHSVC_SERVER__WORKERS="2", **settings)
            started.append(Server(env))
            return Service(started[-1:], env)
        env = server_env(tmp_path, storage_env, **settings)
        for n in range(2):  # two hosts: each its own key directory, the keys in the database
            started.append(Server({**env, "AUTHSVC_AUTH__KEY_DIR": str(tmp_path / f"keys{n}")}))
        return Service(started[-2:], env)

    yield _start
    for server in started:
        server.stop()


async def _call(
    base: str, path: str, body: dict[str, Any], token: str | None = None
) -> tuple[int, Any]:
    """One POST on a fresh connection (so the kernel may hand it to either worker)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session,
        session.post(base + path, json=body, headers=headers) as resp,
    ):
        return resp.status, await resp.json() if resp.status != 204 else None


def _answers(results: list[tuple[int, Any]]) -> Counter[tuple[int, str]]:
    return Counter((status, body.get("code", "")) for status, body in results)


async def _register(service: Service, email: str) -> None:
    status, body = await _call(service.base(0), "/register", {"email": email, "password": PASSWORD})
    assert status == 201, body


async def _mfa_token(service: Service, email: str) -> tuple[str, str]:
    """Register ``email``, switch TOTP on; returns (secret, a fresh ``mfa_token``)."""
    await _register(service, email)
    credentials = {"email": email, "password": PASSWORD}
    status, pair = await _call(service.base(0), "/login", credentials)
    assert status == 200, pair
    access = pair["access_token"]
    #  The password is the fresh proof that adding a factor asks for
    # (docs/reference/mfa-and-passkeys.md).
    status, enrolment = await _call(service.base(0), "/me/mfa/totp", {"password": PASSWORD}, access)
    assert status == 200, enrolment
    secret = enrolment["secret"]
    code = pyotp.TOTP(secret).now()
    status, body = await _call(service.base(0), "/me/mfa/totp/confirm", {"code": code}, access)
    assert status == 200, body
    status, body = await _call(service.base(1), "/login", credentials)
    assert (status, body["code"]) == (401, "mfa_required"), body
    return secret, body["mfa_token"]


def _wrong_codes(secret: str, count: int) -> list[str]:
    """``count`` six-digit codes, none of which any nearby time step of ``secret`` accepts."""
    totp = pyotp.TOTP(secret)
    step = int(time.time()) // 30
    near = {totp.generate_otp(step + d) for d in range(-3, 4)}
    return [c for c in (f"{n:06d}" for n in range(count + len(near))) if c not in near][:count]


async def test_a_burst_of_wrong_passwords_is_evaluated_at_most_the_limit(start: Any) -> None:
    service = start(max_failures=3)
    await _register(service, "alice@example.com")
    wrong = {"email": "alice@example.com", "password": "wrong password!"}
    results = await asyncio.gather(*(_call(service.base(n), "/login", wrong) for n in range(BURST)))
    answers = _answers(results)
    assert set(answers) <= {(401, "invalid_credentials"), (429, "rate_limited")}, answers
    assert 1 <= answers[(401, "invalid_credentials")] <= 3, answers
    assert len(service.audit("login.failed")) == answers[(401, "invalid_credentials")]
    # Throttled now, the right password too (until the window passes).
    right = {"email": "alice@example.com", "password": PASSWORD}
    status, body = await _call(service.base(0), "/login", right)
    assert (status, body["code"]) == (429, "rate_limited"), body


async def test_a_burst_of_wrong_codes_on_one_mfa_token_is_evaluated_at_most_five_times(
    start: Any,
) -> None:
    service = start(max_failures=1000)  # the mfa_token's own limit is the one tested here
    secret, mfa_token = await _mfa_token(service, "bob@example.com")
    guesses = [{"mfa_token": mfa_token, "code": c} for c in _wrong_codes(secret, BURST)]
    results = await asyncio.gather(
        *(_call(service.base(n), "/login/mfa", g) for n, g in enumerate(guesses))
    )
    assert _answers(results) == {(401, "invalid_mfa_code"): BURST}
    evaluated = [d for d in service.audit("mfa.failed") if d["reason"] in ("wrong_code", "voided")]
    assert len(evaluated) == 5, evaluated  # the limit, and never more
    assert [d["reason"] for d in evaluated].count("voided") == 1
    # The fifth wrong code voided the token: the right code no longer logs in with it.
    right = {"mfa_token": mfa_token, "code": pyotp.TOTP(secret).now()}
    status, body = await _call(service.base(0), "/login/mfa", right)
    assert (status, body["code"]) == (401, "invalid_mfa_code"), body
    assert service.db.rows("SELECT count(*) FROM mfa_challenges")[0][0] == 0


async def test_a_burst_of_wrong_codes_is_throttled_per_email_and_address(start: Any) -> None:
    service = start(max_failures=3)
    secret, mfa_token = await _mfa_token(service, "carol@example.com")
    guesses = [{"mfa_token": mfa_token, "code": c} for c in _wrong_codes(secret, BURST)]
    results = await asyncio.gather(
        *(_call(service.base(n), "/login/mfa", g) for n, g in enumerate(guesses))
    )
    answers = _answers(results)
    assert set(answers) <= {(401, "invalid_mfa_code"), (429, "rate_limited")}, answers
    assert 1 <= answers[(401, "invalid_mfa_code")] <= 3, answers
    evaluated = [d for d in service.audit("mfa.failed") if d["reason"] in ("wrong_code", "voided")]
    assert len(evaluated) == answers[(401, "invalid_mfa_code")]
