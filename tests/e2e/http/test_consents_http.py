"""The caller's consents over HTTP (docs/reference/oauth-and-oidc.md: ``GET /me/consents``, ``DELETE
/me/consents/{client_id}``), on SQLite and PostgreSQL. The consents and the sessions a client
started are seeded through the service's own storage (the authorization code flow that grants
them is tested with the provider); everything else goes over HTTP."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from application.sessions.tokens import hash_refresh_token
from domain.audit import AuditQuery
from domain.clients import Client
from domain.model import RefreshToken, Session
from domain.oidc import Consent
from tests.e2e.helpers import (
    ONE_PER_BACKEND,
    assert_problem,
    bearer,
    container_of,
    register_and_login,
)

APP_A, APP_B = "a" * 32, "b" * 32
CONSENT_KEYS = {"client_id", "client_name", "scopes", "granted_at"}


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend (nothing here depends on the alg)."""
    return request.param  # type: ignore[no-any-return]


def _client(client_id: str, name: str) -> Client:
    return Client(
        client_id, name, "default", ("openid",), (), False, False, datetime.now(UTC), "",
        grant_types=("authorization_code", "refresh_token"),
        redirect_uris=("https://app.example/cb",), public=True,
        token_endpoint_auth_method="none",
    )  # fmt: skip


async def _seed(client: TestClient, user_id: str) -> str:
    """Two clients; the user's consent to each (A granted an hour before B) and a session A
    started for the user, with a live refresh token; returns that refresh token."""
    now = datetime.now(UTC)
    token = secrets.token_urlsafe(32)
    session = Session("s" * 32, user_id, now, now, now + timedelta(days=1), None, None, APP_A)
    async with container_of(client).storage().begin() as uow:
        await uow.clients.add(_client(APP_A, "App A"))
        await uow.clients.add(_client(APP_B, "App B"))
        await uow.consents.grant(Consent(user_id, APP_A, ("openid", "email"),
                                         now - timedelta(hours=1)))  # fmt: skip
        await uow.consents.grant(Consent(user_id, APP_B, ("openid",), now))
        await uow.sessions.add(session)
        await uow.tokens.add(RefreshToken(hash_refresh_token(token), user_id, session.id,
                                          now + timedelta(hours=1), session.expires_at, now))  # fmt: skip
        await uow.commit()
    return token


async def _consents(client: TestClient, access: str) -> list[dict[str, Any]]:
    resp = await client.get("/me/consents", headers=bearer(access))
    assert resp.status == 200, await resp.text()
    return (await resp.json())["items"]  # type: ignore[no-any-return]


async def _session_ids(client: TestClient, access: str) -> list[str]:
    resp = await client.get("/me/sessions", headers=bearer(access))
    assert resp.status == 200, await resp.text()
    return [s["id"] for s in (await resp.json())["items"]]


async def _token_stored(client: TestClient, token: str) -> bool:
    async with container_of(client).storage().read() as uow:
        return await uow.tokens.find(hash_refresh_token(token)) is not None


async def _user_id(client: TestClient, access: str) -> str:
    resp = await client.get("/me", headers=bearer(access))
    return (await resp.json())["id"]  # type: ignore[no-any-return]


async def test_a_user_lists_its_consents_newest_first_with_the_client_name(
    client: TestClient,
) -> None:
    alice = await register_and_login(client)
    assert await _consents(client, alice["access_token"]) == []
    await _seed(client, await _user_id(client, alice["access_token"]))
    items = await _consents(client, alice["access_token"])
    assert [set(c) for c in items] == [CONSENT_KEYS, CONSENT_KEYS]
    assert [(c["client_id"], c["client_name"], c["scopes"]) for c in items] == [
        (APP_B, "App B", ["openid"]),
        (APP_A, "App A", ["openid", "email"]),
    ]
    assert all(c["granted_at"].endswith("Z") for c in items)
    bob = await register_and_login(client, "bob@example.com")
    assert await _consents(client, bob["access_token"]) == []  # only the caller's own


async def test_revoking_a_consent_ends_that_clients_sessions_and_is_audited(
    client: TestClient,
) -> None:
    alice = await register_and_login(client)
    user_id = await _user_id(client, alice["access_token"])
    access = alice["access_token"]
    app_token = await _seed(client, user_id)
    # A's session is live before the revocation (a client's refresh token is refused at the
    # JSON API's /refresh by design, so its liveness is read from the sessions list and store)
    assert "s" * 32 in await _session_ids(client, access)
    assert await _token_stored(client, app_token)

    resp = await client.delete(f"/me/consents/{APP_A}", headers=bearer(access))
    assert resp.status == 204
    assert [c["client_id"] for c in await _consents(client, access)] == [APP_B]
    assert "s" * 32 not in await _session_ids(client, access)  # A's session ended with it
    assert not await _token_stored(client, app_token)  # and its refresh token
    resp = await client.post("/refresh", json={"refresh_token": alice["refresh_token"]})
    assert resp.status == 200  # the JSON-API session did not
    resp = await client.delete(f"/me/consents/{APP_A}", headers=bearer(access))
    await assert_problem(resp, 404, "not_found")  # gone: no consent to revoke

    async with container_of(client).storage().read() as uow:
        rows = await uow.audit.list_page(AuditQuery(user_id=user_id), None, 100)
    revoked = [r for r in rows if r.type == "oauth.consent_revoked"]
    assert [(r.actor_id, r.details_dict()) for r in revoked] == [
        (user_id, {"client_id": APP_A, "sessions_ended": 1})
    ]
    ended = [r.details_dict() for r in rows if r.type == "session.ended"]
    assert ended == [{"session_id": "s" * 32, "reason": "user"}]


async def test_revoke_is_404_without_a_consent_and_401_without_a_token(
    client: TestClient,
) -> None:
    alice = await register_and_login(client)
    await _seed(client, await _user_id(client, alice["access_token"]))
    bob = await register_and_login(client, "bob@example.com")
    for path in (f"/me/consents/{APP_A}", "/me/consents/" + "c" * 32, "/me/consents/not-an-id"):
        resp = await client.delete(path, headers=bearer(bob["access_token"]))
        await assert_problem(resp, 404, "not_found")
    await assert_problem(await client.get("/me/consents"), 401, "invalid_token")
    await assert_problem(await client.delete(f"/me/consents/{APP_A}"), 401, "invalid_token")
    assert len(await _consents(client, alice["access_token"])) == 2  # bob touched nothing
