"""Pushed authorization requests end to end over HTTP (RFC 9126; docs/reference/oauth-and-oidc.md):
``POST /oauth/par`` checks and stores a request, ``/oauth/authorize`` runs it once through the
hosted login and consent, a client that requires PAR is refused without it, and every refusal —
on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs
import pytest
from aiohttp.test_utils import TestClient
from dependency_injector import providers

from tests.e2e.helpers import ONE_PER_BACKEND, MakeClient, container_of
from tests.e2e.oidc_helpers import (
    REDIRECT,
    Registered,
    auth_params,
    authorize,
    client_auth,
    code_via_browser,
    exchange,
    pkce,
    query_of,
    register_client,
    register_user,
)
from tests.fakes import FakeClock

PREFIX = "urn:ietf:params:oauth:request_uri:"


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def clock() -> FakeClock:
    """The app's clock, a little behind the real time (tests move it)."""
    return FakeClock(datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=120))


@pytest.fixture
async def client(make_client: MakeClient, clock: FakeClock) -> AsyncIterator[TestClient]:
    """The app on ``clock``."""
    app = await make_client()
    container_of(app).clock.override(providers.Object(clock))
    try:
        yield app
    finally:
        container_of(app).clock.reset_override()


async def _push(client: TestClient, app: Registered, params: dict[str, str]) -> Any:
    headers, form = client_auth(app)
    return await client.post("/oauth/par", data={**form, **params}, headers=headers)


async def _pushed_uri(client: TestClient, app: Registered, params: dict[str, str]) -> str:
    resp = await _push(client, app, params)
    assert resp.status == 201, await resp.text()
    assert resp.headers["Cache-Control"] == "no-store"
    body = await resp.json()
    assert body["expires_in"] == 60 and body["request_uri"].startswith(PREFIX)
    assert len(body["request_uri"]) - len(PREFIX) == 43  # 256 bits, base64url
    return str(body["request_uri"])


async def _require_par(client: TestClient, app: Registered) -> Registered:
    record = attrs.evolve(app.record, require_pushed_authorization_requests=True)
    async with container_of(client).storage().begin() as uow:
        await uow.clients.update(record)
        await uow.commit()
    return attrs.evolve(app, record=record)


async def test_a_pushed_request_runs_the_code_flow_once(client: TestClient) -> None:
    await register_user(client)
    app = await register_client(client)
    verifier, challenge = pkce()
    params = auth_params(app, challenge, scope="openid", state="par-state")
    params.pop("client_id")
    uri = await _pushed_uri(client, app, params)
    callback = await code_via_browser(client, app, {"client_id": app.id, "request_uri": uri})
    assert callback["state"] == "par-state"
    resp = await exchange(client, app, callback["code"], verifier)
    assert resp.status == 200, await resp.text()
    # used: an error page, never a redirect
    resp = await authorize(client, {"client_id": app.id, "request_uri": uri})
    assert resp.status == 400 and "request_uri" in await resp.text()


async def test_a_client_that_requires_par_is_refused_without_it(client: TestClient) -> None:
    await register_user(client)
    app = await _require_par(client, await register_client(client))
    verifier, challenge = pkce()
    resp = await authorize(client, auth_params(app, challenge))
    assert resp.status == 303
    refused = query_of(resp.headers["Location"])
    assert resp.headers["Location"].startswith(REDIRECT)
    assert refused["error"] == "invalid_request" and refused["state"] == "st-1"
    # through PAR: the login and the consent page come back with the pushed request
    uri = await _pushed_uri(client, app, auth_params(app, challenge))
    callback = await code_via_browser(client, app, {"client_id": app.id, "request_uri": uri})
    resp = await exchange(client, app, callback["code"], verifier)
    assert resp.status == 200, await resp.text()


async def test_a_request_uri_is_bound_to_its_client_and_expires(
    client: TestClient, clock: FakeClock
) -> None:
    await register_user(client)
    app, other = await register_client(client), await register_client(client)
    _, challenge = pkce()
    uri = await _pushed_uri(client, app, auth_params(app, challenge))
    for params in (
        {"client_id": other.id, "request_uri": uri},
        {"request_uri": uri},
        {"client_id": app.id, "request_uri": PREFIX + "x" * 43},
    ):
        resp = await authorize(client, params)
        assert resp.status == 400, params
    # the other client's try left it usable by its own client
    resp = await authorize(client, {"client_id": app.id, "request_uri": uri})
    assert resp.status == 303 and resp.headers["Location"].startswith("/ui/login?")
    late = await _pushed_uri(client, app, auth_params(app, challenge))
    clock.advance(60)
    resp = await authorize(client, {"client_id": app.id, "request_uri": late})
    assert resp.status == 400


async def test_par_checks_the_request_like_authorize(client: TestClient) -> None:
    app = await register_client(client, scopes=("read",))
    _, challenge = pkce()
    good = auth_params(app, challenge)
    cases = [
        ({**good, "scope": "openid write"}, "invalid_scope"),
        ({**good, "redirect_uri": "https://evil.example/cb"}, "invalid_request"),
        ({**good, "code_challenge_method": "plain"}, "invalid_request"),
        ({**good, "response_type": "token"}, "unsupported_response_type"),
        ({**good, "request_uri": PREFIX + "abc"}, "invalid_request"),
        ({**good, "client_id": "f" * 32}, "invalid_request"),
    ]
    for params, error in cases:
        resp = await _push(client, app, params)
        assert resp.status == 400, (params, await resp.text())
        assert (await resp.json())["error"] == error, params
    resp = await client.post("/oauth/par", data=good)  # no client authentication
    assert resp.status == 401 and (await resp.json())["error"] == "invalid_client"
    wrong = attrs.evolve(app, secret="wrong")
    assert (await _push(client, wrong, good)).status == 401


async def test_discovery_names_the_endpoint(client: TestClient) -> None:
    for path in ("/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"):
        doc = await (await client.get(path)).json()
        assert doc["pushed_authorization_request_endpoint"] == doc["issuer"] + "/oauth/par"
        assert doc["require_pushed_authorization_requests"] is False
