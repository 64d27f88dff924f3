"""Back-channel logout over HTTP (docs/reference/oauth-and-oidc.md; OpenID Connect Back-Channel
Logout 1.0): a relying party's receiver gets a logout token, verified with PyJWT over the JWKS,
for each way a session it signed in through ends — RP-initiated logout, the user ending its
sessions, a password change, an administrator ending them, a revoked consent, disabling and
deleting the user — with the ``sid`` of the ID tokens it got; a receiver that fails then
recovers gets it on a later try (same ``jti``); the client fields and discovery."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest
from aiohttp.test_utils import TestClient

from domain.audit import AuditQuery
from domain.model import Role
from tests.e2e.accounts_world import ROOT, add_user, login
from tests.e2e.backchannel_receiver import Receiver, verified_logout_token
from tests.e2e.helpers import ONE_PER_BACKEND, PASSWORD, assert_problem, bearer, container_of
from tests.e2e.oidc_helpers import (
    Registered,
    auth_params,
    code_via_browser,
    exchange,
    pkce,
    register_client,
    verify_id_token,
)

ALICE = "alice@example.com"


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    made = Receiver()
    yield made
    await made.close()


async def _rp(client: TestClient, uri: str, **fields: Any) -> Registered:
    """A code-flow client whose back-channel logout endpoint is ``uri``."""
    app = await register_client(client, **fields)
    record = attrs.evolve(
        app.record, backchannel_logout_uri=uri, backchannel_logout_session_required=True
    )
    async with container_of(client).storage().begin() as uow:
        await uow.clients.update(record)
        await uow.commit()
    return attrs.evolve(app, record=record)


async def _signed_in(
    client: TestClient, app: Registered, email: str = ALICE, password: str = PASSWORD
) -> dict[str, Any]:
    """A fresh browser login of ``email`` through ``app``'s code flow (with a refresh token);
    the ID token's verified claims."""
    client.session.cookie_jar.clear()
    verifier, challenge = pkce()
    params = auth_params(app, challenge, scope="openid offline_access")
    callback = await code_via_browser(client, app, params, email, password)
    resp = await exchange(client, app, callback["code"], verifier)
    assert resp.status == 200, await resp.text()
    return await verify_id_token(client, (await resp.json())["id_token"], app.id)


async def _drained(client: TestClient, timeout: float = 10.0) -> None:
    """Wait until the outbox is empty: the worker deletes an item (and writes its audit row)
    just after the receiver answered."""
    async with asyncio.timeout(timeout):
        while True:
            async with container_of(client).storage().read() as uow:
                if await uow.outbox.count() == 0:
                    return
            await asyncio.sleep(0.05)


async def test_every_way_a_session_ends_sends_a_verified_logout_token(
    client: TestClient, receiver: Receiver
) -> None:
    uri = await receiver.start()
    alice = await add_user(client, ALICE)
    await add_user(client, ROOT, Role.SUPERADMIN)
    root = bearer((await login(client, ROOT))["access_token"])
    app = await _rp(client, uri, skip_consent=True)
    asking = await _rp(client, uri, name="Asks consent")
    sent = 0
    password = [PASSWORD, "a brand new passphrase"]

    async def ends(how: Any, rp: Registered = app) -> None:
        nonlocal sent
        id_token = await _signed_in(client, rp, ALICE, password[0])
        await how(id_token)
        sent += 1
        [*_, token] = await receiver.wait_for(sent)
        claims = await verified_logout_token(client, token, rp.id)
        assert (claims["sub"], claims["sid"]) == (alice, id_token["sid"])

    async def own_sessions(_: dict[str, Any]) -> None:
        me = bearer((await login(client, ALICE))["access_token"])
        assert (await client.delete("/me/sessions", headers=me)).status == 204

    async def password_change(_: dict[str, Any]) -> None:
        me = bearer((await login(client, ALICE, password[0]))["access_token"])
        body = {"old_password": password[0], "new_password": password[1]}
        resp = await client.post("/me/password", json=body, headers=me)
        assert resp.status == 204, await resp.text()
        password.reverse()

    async def admin_ends(_: dict[str, Any]) -> None:
        resp = await client.delete(f"/users/{alice}/sessions", headers=root)
        assert resp.status == 204

    async def consent_revoked(_: dict[str, Any]) -> None:
        me = bearer((await login(client, ALICE, password[0]))["access_token"])
        resp = await client.delete(f"/me/consents/{asking.id}", headers=me)
        assert resp.status == 204, await resp.text()

    async def disabled(_: dict[str, Any]) -> None:
        resp = await client.patch(f"/users/{alice}", json={"disabled": True}, headers=root)
        assert resp.status == 200
        resp = await client.patch(f"/users/{alice}", json={"disabled": False}, headers=root)
        assert resp.status == 200

    async def deleted(_: dict[str, Any]) -> None:
        assert (await client.delete(f"/users/{alice}", headers=root)).status == 204

    await ends(own_sessions)
    await ends(admin_ends)
    await ends(consent_revoked, asking)
    await ends(disabled)
    await ends(password_change)
    await ends(deleted)
    assert receiver.content_types == ["application/x-www-form-urlencoded"] * sent
    await _drained(client)
    async with container_of(client).storage().read() as uow:
        rows = await uow.audit.list_page(AuditQuery(type="oidc.backchannel_logout_sent"), None, 50)
    assert len(rows) == sent
    assert all(r.details["client_id"] in (app.id, asking.id) for r in rows)


async def test_rp_initiated_logout_sends_the_sid_of_the_id_token(
    client: TestClient, receiver: Receiver
) -> None:
    """The hosted logout with the RP's ``id_token_hint`` ends the browser's session: the
    receiver gets a logout token naming that login's ``sid``."""
    uri = await receiver.start()
    alice = await add_user(client, ALICE)
    app = await _rp(client, uri, skip_consent=True)
    verifier, challenge = pkce()
    client.session.cookie_jar.clear()
    callback = await code_via_browser(client, app, auth_params(app, challenge), ALICE)
    tokens = await (await exchange(client, app, callback["code"], verifier)).json()
    id_claims = await verify_id_token(client, tokens["id_token"], app.id)
    params = {"id_token_hint": tokens["id_token"],
              "post_logout_redirect_uri": "https://app.example.com/bye"}  # fmt: skip
    resp = await client.get("/oauth/logout", params=params, allow_redirects=False)
    assert resp.status == 303
    [token] = await receiver.wait_for(1)
    claims = await verified_logout_token(client, token, app.id)
    assert (claims["sub"], claims["sid"]) == (alice, id_claims["sid"])
    await _drained(client)  # nothing in flight when the schema is emptied


async def test_a_receiver_that_fails_then_recovers_gets_the_same_token_later(
    client: TestClient, receiver: Receiver
) -> None:
    """503 twice, then 200: the third try (2 s, then 4 s later) is taken; every try carried
    the same ``jti``; audited ``oidc.backchannel_logout_sent`` with 3 attempts."""
    receiver.fail_first = 2
    uri = await receiver.start()
    await add_user(client, ALICE)
    app = await _rp(client, uri, skip_consent=True)
    id_token = await _signed_in(client, app)
    me = bearer((await login(client, ALICE))["access_token"])
    assert (await client.delete("/me/sessions", headers=me)).status == 204
    [token] = await receiver.wait_for(1, timeout=30)
    claims = await verified_logout_token(client, token, app.id)
    assert claims["sid"] == id_token["sid"]
    assert len(receiver.refused) == 2
    for refused in receiver.refused:
        assert (await verified_logout_token(client, refused, app.id))["jti"] == claims["jti"]
    await _drained(client)
    async with container_of(client).storage().read() as uow:
        [row] = await uow.audit.list_page(AuditQuery(type="oidc.backchannel_logout_sent"), None, 10)
    assert row.details["attempts"] == 3


async def test_the_client_fields_and_discovery(client: TestClient) -> None:
    await add_user(client, ROOT, Role.SUPERADMIN)
    root = bearer((await login(client, ROOT))["access_token"])
    base = {"name": "RP", "scopes": [], "grant_types": ["authorization_code"],
            "redirect_uris": ["https://rp.example/cb"]}  # fmt: skip
    for bad in ("http://rp.example/logout", "https://rp.example/logout#x", "rp.example", 7):
        resp = await client.post(
            "/oauth/clients", json={**base, "backchannel_logout_uri": bad}, headers=root
        )
        body = await assert_problem(resp, 422, "validation_error")
        assert "backchannel_logout_uri" in str(body)
    good = {**base, "backchannel_logout_uri": "https://rp.example/logout",
            "backchannel_logout_session_required": True}  # fmt: skip
    resp = await client.post("/oauth/clients", json=good, headers=root)
    assert resp.status == 201, await resp.text()
    made = await resp.json()
    assert made["backchannel_logout_uri"] == "https://rp.example/logout"
    assert made["backchannel_logout_session_required"] is True
    resp = await client.patch(
        f"/oauth/clients/{made['client_id']}",
        json={"backchannel_logout_uri": "http://127.0.0.1:9/logout"}, headers=root,
    )  # fmt: skip
    assert (await resp.json())["backchannel_logout_uri"] == "http://127.0.0.1:9/logout"
    doc = await (await client.get("/.well-known/openid-configuration")).json()
    assert doc["backchannel_logout_supported"] is True
    assert doc["backchannel_logout_session_supported"] is True
