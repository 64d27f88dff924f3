"""The device authorization grant end to end over HTTP (RFC 8628; docs/reference/oauth-and-oidc.md):
``POST /oauth/device_authorization``, the verification pages at ``/ui/device`` driven by a
cookie-jar client, and the token endpoint's polling with every error code — on SQLite and
PostgreSQL. The app's clock is a ``FakeClock`` moved by the tests (never waited for)."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import attrs
import pytest
from aiohttp.test_utils import TestClient
from dependency_injector import providers

from application.audit.query import AuditQuery
from domain.device import DEVICE_CODE_GRANT, USER_CODE_ALPHABET
from tests.e2e.helpers import ONE_PER_BACKEND, MakeClient, container_of
from tests.e2e.oidc_helpers import (
    ISSUER,
    ORIGIN,
    Registered,
    client_auth,
    csrf_of,
    register_client,
    register_user,
    sign_in,
    verify_id_token,
)
from tests.fakes import FakeClock

WRONG_CODE = "This code is wrong or has expired"


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


@attrs.frozen
class World:
    client: TestClient
    clock: FakeClock


@pytest.fixture
async def world(make_client: MakeClient) -> AsyncIterator[World]:
    client = await make_client()
    # behind the real time by more than the tests move it: PyJWT checks iat with the real one
    clock = FakeClock(datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=120))
    container_of(client).clock.override(providers.Object(clock))
    try:
        yield World(client, clock)
    finally:
        container_of(client).clock.reset_override()


async def _device_client(client: TestClient, public: bool = True, **kw: Any) -> Registered:
    app = await register_client(client, public=public, redirect_uris=(), **kw)
    grants = ("refresh_token", DEVICE_CODE_GRANT)
    record = attrs.evolve(app.record, grant_types=grants)
    async with container_of(client).storage().begin() as uow:
        await uow.clients.update(record)
        await uow.commit()
    return attrs.evolve(app, record=record)


async def _start(client: TestClient, app: Registered, scope: str | None = "openid") -> Any:
    headers, form = client_auth(app)
    if scope is not None:
        form = {**form, "scope": scope}
    return await client.post("/oauth/device_authorization", data=form, headers=headers)


async def _poll(client: TestClient, app: Registered, device_code: str) -> Any:
    headers, form = client_auth(app)
    form = {**form, "grant_type": DEVICE_CODE_GRANT, "device_code": device_code}
    return await client.post("/oauth/token", data=form, headers=headers)


async def _error(resp: Any) -> str:
    assert resp.status == 400, await resp.text()
    assert resp.headers["Cache-Control"] == "no-store"
    return str((await resp.json())["error"])


async def _signed_in_at(client: TestClient, uri: str) -> Any:
    """Open ``uri`` (a verification URI); sign in when sent to the login page; the page."""
    path = uri.removeprefix(ISSUER)
    resp = await client.get(path, allow_redirects=False)
    if resp.status == 303:
        location = resp.headers["Location"]
        assert location.startswith("/ui/login?"), location
        return_to = parse_qs(urlsplit(location).query)["return_to"][0]
        assert return_to == path
        assert await sign_in(client, return_to) == path
        resp = await client.get(path, allow_redirects=False)
    return resp


async def _decide(client: TestClient, user_code: str, decision: str) -> Any:
    form = {"user_code": user_code, "decision": decision, "csrf_token": csrf_of(client)}
    return await client.post("/ui/device", data=form, headers=ORIGIN, allow_redirects=False)


async def _audit_types(client: TestClient) -> list[str]:
    async with container_of(client).storage().read() as uow:
        return [e.type for e in await uow.audit.list_page(AuditQuery(), None, 200)]


async def test_the_whole_flow_with_pending_slow_down_and_tokens_once(world: World) -> None:
    client, clock = world.client, world.clock
    user_id = await register_user(client)
    app = await _device_client(client)
    resp = await _start(client, app, "openid offline_access phone")
    assert resp.status == 200, await resp.text()
    assert resp.headers["Cache-Control"] == "no-store"
    started = await resp.json()
    assert set(started) == {"device_code", "user_code", "verification_uri",
                            "verification_uri_complete", "expires_in", "interval"}  # fmt: skip
    assert started["verification_uri"] == ISSUER + "/ui/device"
    assert started["expires_in"] == 600 and started["interval"] == 5
    user_code = started["user_code"]
    assert len(user_code) == 9 and user_code[4] == "-"
    assert set(user_code.replace("-", "")) <= set(USER_CODE_ALPHABET)
    assert started["verification_uri_complete"] == f"{ISSUER}/ui/device?user_code={user_code}"
    assert len(base64.urlsafe_b64decode(started["device_code"] + "=")) == 32  # 256 bits
    async with container_of(client).storage().begin() as uow:  # stored hashed only
        digest = hashlib.sha256(started["device_code"].encode()).hexdigest()
        assert await uow.device_grants.get(digest) is not None

    device_code = started["device_code"]
    assert await _error(await _poll(client, app, device_code)) == "authorization_pending"
    clock.advance(2)
    assert await _error(await _poll(client, app, device_code)) == "slow_down"
    clock.advance(6)  # 5 s after the last poll is not enough any more: the interval is 10 s
    assert await _error(await _poll(client, app, device_code)) == "slow_down"
    clock.advance(16)
    assert await _error(await _poll(client, app, device_code)) == "authorization_pending"

    page = await _signed_in_at(client, started["verification_uri_complete"])
    assert page.status == 200
    text = await page.text()
    assert user_code in text and "Example App" in text and "alice@example.com" in text
    resp = await _decide(client, user_code.lower().replace("-", " "), "allow")
    assert resp.status == 303 and resp.headers["Location"] == "/ui/device/done?result=approved"
    done = await client.get(resp.headers["Location"])
    assert "Return to your device" in await done.text()

    clock.advance(30)
    resp = await _poll(client, app, device_code)
    assert resp.status == 200, await resp.text()
    tokens = await resp.json()
    assert tokens["token_type"] == "Bearer" and tokens["scope"] == "openid offline_access"
    assert "refresh_token" in tokens
    claims = await verify_id_token(client, tokens["id_token"], app.id)
    assert claims["sub"] == user_id and claims["amr"] == ["pwd"] and "nonce" not in claims
    clock.advance(30)
    assert await _error(await _poll(client, app, device_code)) == "invalid_grant"  # once
    # the refresh token works like the code flow's
    headers, form = client_auth(app)
    form = {**form, "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}
    resp = await client.post("/oauth/token", data=form, headers=headers)
    assert resp.status == 200, await resp.text()
    types = await _audit_types(client)
    assert "oauth.device_approved" in types and "oauth.consent_granted" in types


async def test_denied_expired_and_a_used_code_at_the_page(world: World) -> None:
    client, clock = world.client, world.clock
    await register_user(client)
    app = await _device_client(client)
    denied = await (await _start(client, app)).json()
    expired = await (await _start(client, app)).json()
    assert (await _signed_in_at(client, denied["verification_uri_complete"])).status == 200
    resp = await _decide(client, denied["user_code"], "deny")
    assert resp.headers["Location"] == "/ui/device/done?result=denied"
    assert await _error(await _poll(client, app, denied["device_code"])) == "access_denied"
    # a decided code is not found again
    resp = await client.get("/ui/device", params={"user_code": denied["user_code"]})
    assert resp.status == 400 and WRONG_CODE in await resp.text()
    clock.advance(600)
    assert await _error(await _poll(client, app, expired["device_code"])) == "expired_token"
    resp = await _decide(client, expired["user_code"], "allow")
    assert resp.status == 400  # expired: nothing to approve
    assert "oauth.device_denied" in await _audit_types(client)


async def test_client_errors_at_both_endpoints(world: World) -> None:
    client = world.client
    app = await _device_client(client, public=False, scopes=("read",))
    code_only = await register_client(client)  # no device grant
    assert (await _start(client, app, "openid read")).status == 200
    assert await _error(await _start(client, app, "write")) == "invalid_scope"
    assert await _error(await _start(client, code_only)) == "unauthorized_client"
    wrong = attrs.evolve(app, secret="not-the-secret")
    resp = await _start(client, wrong)
    assert resp.status == 401 and (await resp.json())["error"] == "invalid_client"
    started = await (await _start(client, app)).json()
    other = await _device_client(client)
    assert await _error(await _poll(client, other, started["device_code"])) == "invalid_grant"
    assert await _error(await _poll(client, app, "no-such-code")) == "invalid_grant"
    headers, form = client_auth(app)
    resp = await client.post(
        "/oauth/token", data={**form, "grant_type": DEVICE_CODE_GRANT}, headers=headers
    )
    assert await _error(resp) == "invalid_request"
    # another client's failed poll changed nothing: the owner's first poll is pending
    assert await _error(await _poll(client, app, started["device_code"])) == "authorization_pending"


async def test_wrong_user_codes_are_limited_per_address(world: World) -> None:
    client = world.client
    await register_user(client)
    resp = await client.get("/ui/device", allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"].startswith("/ui/login?")
    await sign_in(client, "/ui/device")
    page = await client.get("/ui/device")
    assert page.status == 200 and 'name="user_code"' in await page.text()
    for attempt in ("BCDF-GHJK", "not a code", "ZZZZ-ZZZZ", "bcdfghjk", "XXXX-XXXX"):
        resp = await client.get("/ui/device", params={"user_code": attempt})
        assert resp.status == 400, attempt
        assert WRONG_CODE in await resp.text()
    resp = await client.get("/ui/device", params={"user_code": "BCDF-GHJL"})
    assert resp.status == 429 and int(resp.headers["Retry-After"]) > 0
    assert (await _audit_types(client)).count("oauth.device_code_refused") == 5


async def test_a_forged_post_is_refused(world: World) -> None:
    client = world.client
    await register_user(client)
    app = await _device_client(client)
    started = await (await _start(client, app)).json()
    await _signed_in_at(client, started["verification_uri_complete"])
    form = {"user_code": started["user_code"], "decision": "allow", "csrf_token": "x" * 43}
    resp = await client.post("/ui/device", data=form, headers=ORIGIN, allow_redirects=False)
    assert resp.status == 403
    assert await _error(await _poll(client, app, started["device_code"])) == (
        "authorization_pending"
    )
