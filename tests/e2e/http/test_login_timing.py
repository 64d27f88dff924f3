"""No user enumeration by timing (docs/reference/tokens-and-sessions.md): a user without a password
(created by a federated login) answers ``/login`` and ``/ui/login`` in the time of an unknown email,
one bcrypt check at the configured cost, over HTTP."""

from __future__ import annotations

import time

import pytest
from aiohttp.test_utils import TestClient

from application.shared.steps import new_id
from domain.model import Role, User
from tests.e2e.helpers import ONE_PER_BACKEND, MakeClient, assert_problem, container_of
from tests.e2e.oidc_helpers import ORIGIN, csrf_of

ROUNDS = 10
"""A bcrypt cost whose check (tens of ms) stands out from a request without one (~2 ms)."""
SAMPLES = 3


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


async def add_federated_user(client: TestClient, email: str) -> None:
    """A user as a federated login creates it: no password (an empty hash)."""
    container = container_of(client)
    user = User(id=new_id(), email=email, password_hash="", role=Role.VIEWER, org_id="default",
                created_at=container.clock().now(), email_verified=True)  # fmt: skip
    async with container.storage().begin() as uow:
        await uow.users.add(user)
        await uow.commit()


async def json_login(client: TestClient, email: str) -> float:
    started = time.perf_counter()
    resp = await client.post("/login", json={"email": email, "password": "a wrong password"})
    elapsed = time.perf_counter() - started
    await assert_problem(resp, 401, "invalid_credentials")
    return elapsed


async def page_login(client: TestClient, email: str) -> float:
    form = {"email": email, "password": "a wrong password", "csrf_token": csrf_of(client)}
    started = time.perf_counter()
    resp = await client.post("/ui/login", data=form, headers=ORIGIN, allow_redirects=False)
    elapsed = time.perf_counter() - started
    assert resp.status == 401
    return elapsed


async def test_a_user_without_a_password_takes_an_unknown_emails_time(
    make_client: MakeClient,
) -> None:
    """The fastest of a few tries each (load only adds time): the federated-only user's answer
    takes at least half the unknown email's (before: ~24 ms against ~260 ms at cost 12)."""
    client = await make_client({"AUTHSVC_AUTH__BCRYPT_ROUNDS": str(ROUNDS),
                                "AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "100"})  # fmt: skip
    await add_federated_user(client, "fed@example.com")
    await client.get("/ui/login")  # the CSRF cookie
    for login in (json_login, page_login):
        unknown = min([await login(client, "nobody@example.com") for _ in range(SAMPLES)])
        federated = min([await login(client, "fed@example.com") for _ in range(SAMPLES)])
        assert federated >= unknown / 2, (login.__name__, federated, unknown)
