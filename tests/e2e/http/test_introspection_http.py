"""Introspection's answers over HTTP (RFC 7662; docs/reference/oauth-and-oidc.md), on SQLite and
PostgreSQL, with a controlled clock: no leeway past ``exp`` (a token 1 s past it is inactive, though
user tokens still get ``auth.leeway``), and the ``scope`` shown is the token's scopes that its
client still holds after its scopes were reduced."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import pytest
from aiohttp.test_utils import TestClient
from dependency_injector import providers

from entrypoints.config import load_config
from entrypoints.container import build_container
from entrypoints.http.app import create_app
from tests.e2e.helpers import ONE_PER_BACKEND, bearer
from tests.e2e.http.test_oauth_http import Machines, machines
from tests.fakes import FakeClock

TTL = 300  # oauth.client_token_ttl (default)


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend."""
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
async def clocked(
    aiohttp_client: Callable[..., Awaitable[TestClient]], base_env: dict[str, str]
) -> tuple[Machines, FakeClock]:
    """``Machines`` over an app whose clock the test moves (it starts now)."""
    environ = {**base_env, "AUTHSVC_OAUTH__SHARED_SCOPES": "read,write,admin"}
    container = build_container(load_config(environ=environ), environ=environ)
    clock = FakeClock(datetime.now(UTC).replace(microsecond=0))
    container.clock.override(providers.Object(clock))
    http = await aiohttp_client(create_app(container))

    async def made(_: dict[str, str] | None = None) -> TestClient:
        return http

    return await machines(made), clock


async def test_a_token_past_its_exp_is_inactive_with_no_leeway(
    clocked: tuple[Machines, FakeClock],
) -> None:
    m, clock = clocked
    client = await m.register(m.admin)
    token = (await m.granted(client))["access_token"]
    clock.advance(TTL - 1)
    assert (await m.introspect(client, token))["active"] is True  # 1 s before exp
    clock.advance(1)
    assert await m.introspect(client, token) == {"active": False}  # at exp
    clock.advance(1)
    assert await m.introspect(client, token) == {"active": False}  # 1 s past exp


async def test_the_scope_shown_is_what_the_client_still_holds(
    clocked: tuple[Machines, FakeClock],
) -> None:
    m, _ = clocked
    client = await m.register(m.admin, scopes=["read", "write", "admin"])
    token = (await m.granted(client, scope="write read"))["access_token"]
    assert (await m.introspect(client, token))["scope"] == "write read"
    resp = await m.http.patch(f"/oauth/clients/{client['client_id']}",
                              json={"scopes": ["read", "admin"]}, headers=bearer(m.admin))  # fmt: skip
    assert resp.status == 200, await resp.text()
    seen = await m.introspect(client, token)
    assert seen["active"] is True and seen["scope"] == "read"
    resp = await m.http.patch(f"/oauth/clients/{client['client_id']}",
                              json={"scopes": []}, headers=bearer(m.admin))  # fmt: skip
    assert resp.status == 200, await resp.text()
    seen = await m.introspect(client, token)
    assert seen["active"] is True and seen["scope"] == ""
