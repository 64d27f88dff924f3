"""What the end-to-end tests share besides fixtures: the deployments they run on, the test
password, and helpers over a test client (``bearer``, ``register_and_login``,
``assert_problem``, ``container_of``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from entrypoints.container import Container
from entrypoints.http.keys import CONTAINER

MakeClient = Callable[..., Awaitable[TestClient]]


DEPLOYMENTS = [
    pytest.param(("sqlite", "RS256"), id="sqlite-RS256"),
    pytest.param(("sqlite", "ML-DSA-65"), id="sqlite-ML-DSA-65"),
    pytest.param(("sqlite", "ML-DSA-87"), id="sqlite-ML-DSA-87"),
    pytest.param(("postgres", "RS256"), id="postgres-RS256", marks=pytest.mark.postgres),
]
"""Every e2e test runs on SQLite with each signing algorithm, and once on Postgres."""

ONE_PER_BACKEND = [DEPLOYMENTS[0], DEPLOYMENTS[-1]]
"""SQLite and Postgres with RS256: for a module whose behaviour does not depend on the signing
algorithm (it overrides ``deployment`` with these params)."""

USER_KEYS = frozenset(
    {
        "id",
        "email",
        "role",
        "org_id",
        "created_at",
        "disabled",
        "email_verified",
        "mfa_enabled",
        "passkeys",
    }
)
"""The keys of the contract's ``User`` (never a password hash)."""


def container_of(client: TestClient) -> Container:
    return client.app[CONTAINER]


PASSWORD = "correct horse battery"


async def register_and_login(
    client: TestClient, email: str = "alice@example.com", password: str = PASSWORD
) -> dict[str, Any]:
    """Register ``email`` and log in; returns the TokenPair body."""
    resp = await client.post("/register", json={"email": email, "password": password})
    assert resp.status == 201, await resp.text()
    resp = await client.post("/login", json={"email": email, "password": password})
    assert resp.status == 200, await resp.text()
    return await resp.json()  # type: ignore[no-any-return]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def assert_problem(resp: Any, status: int, code: str) -> dict[str, Any]:
    """Assert an RFC 9457 problem+json response with the contract's ``code``."""
    assert resp.status == status, await resp.text()
    assert resp.headers["Content-Type"].startswith("application/problem+json")
    body = await resp.json()
    assert body["status"] == status and body["code"] == code
    assert {"type", "title", "detail"} <= set(body)
    return body  # type: ignore[no-any-return]
