"""Sessions, the user lifecycle and the refresh reuse interval over HTTP
(docs/reference/tokens-and-sessions.md and docs/reference/accounts.md): on SQLite and PostgreSQL,
with every signing algorithm on SQLite."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient

from domain.clients import Client
from domain.model import RefreshToken, Session
from tests.e2e.helpers import (
    PASSWORD,
    MakeClient,
    assert_problem,
    bearer,
    container_of,
    register_and_login,
)

SESSION_KEYS = {"id", "created_at", "last_used_at", "expires_at", "user_agent", "client_address",
                "client_id", "client_name"}  # fmt: skip
ROOT = "root@example.com"


async def _login(client: TestClient, email: str, agent: str | None = None) -> dict[str, Any]:
    headers = {} if agent is None else {"User-Agent": agent}
    resp = await client.post("/login", json={"email": email, "password": PASSWORD},
                             headers=headers)  # fmt: skip
    assert resp.status == 200, await resp.text()
    return await resp.json()  # type: ignore[no-any-return]


async def _refresh(client: TestClient, token: str) -> aiohttp.ClientResponse:
    return await client.post("/refresh", json={"refresh_token": token})


async def _root(client: TestClient) -> str:
    """A superadmin ``root`` (the operator's command); its access token."""
    await container_of(client).create_superadmin()(ROOT, PASSWORD)
    return (await _login(client, ROOT))["access_token"]  # type: ignore[no-any-return]


async def _me(client: TestClient, access: str) -> dict[str, Any]:
    resp = await client.get("/me", headers=bearer(access))
    assert resp.status == 200, await resp.text()
    return await resp.json()  # type: ignore[no-any-return]


async def test_a_user_sees_its_sessions_and_ends_them(client: TestClient) -> None:
    await client.post("/register", json={"email": "a@example.com", "password": PASSWORD})
    phone = await _login(client, "a@example.com", "Phone/1.0")
    laptop = await _login(client, "a@example.com", "Laptop/2.0 " + "x" * 300)
    resp = await client.get("/me/sessions", headers=bearer(laptop["access_token"]))
    assert resp.status == 200
    items = (await resp.json())["items"]
    assert [set(s) for s in items] == [SESSION_KEYS, SESSION_KEYS]
    assert [s["user_agent"][:10] for s in items] == ["Laptop/2.0", "Phone/1.0"]  # newest first
    assert len(items[0]["user_agent"]) == 256
    assert {s["client_address"] for s in items} == {"127.0.0.1"}
    assert {(s["client_id"], s["client_name"]) for s in items} == {(None, None)}  # JSON API
    body = await resp.text()
    assert phone["refresh_token"] not in body and laptop["refresh_token"] not in body

    bob = await register_and_login(client, "b@example.com")
    resp = await client.delete(
        f"/me/sessions/{items[1]['id']}", headers=bearer(bob["access_token"])
    )
    await assert_problem(resp, 404, "not_found")  # another user's session

    resp = await client.delete(f"/me/sessions/{items[1]['id']}",
                               headers=bearer(laptop["access_token"]))  # fmt: skip
    assert resp.status == 204
    await assert_problem(
        await _refresh(client, phone["refresh_token"]), 401, "invalid_refresh_token"
    )
    renewed = await _refresh(client, laptop["refresh_token"])
    assert renewed.status == 200
    resp = await client.delete("/me/sessions", headers=bearer(laptop["access_token"]))
    assert resp.status == 204
    token = (await renewed.json())["refresh_token"]
    await assert_problem(await _refresh(client, token), 401, "invalid_refresh_token")
    resp = await client.get("/me/sessions", headers=bearer(laptop["access_token"]))
    assert (await resp.json())["items"] == []
    await _refresh(client, bob["refresh_token"])  # bob's session is untouched


async def test_a_session_an_oidc_client_started_names_the_client_in_both_views(
    client: TestClient,
) -> None:
    """``client_id`` and ``client_name`` (docs/reference/tokens-and-sessions.md and
    docs/reference/oauth-and-oidc.md) in GET /me/sessions and in an administrator's GET
    /users/{id}/sessions; the session (started by the provider's code flow) is seeded through the
    service's storage."""
    root = await _root(client)
    alice = await register_and_login(client)
    user_id = (await _me(client, alice["access_token"]))["id"]
    now = datetime.now(UTC)
    app = Client("a" * 32, "Photo App", "default", ("openid",), (), False, False, now, "",
                 grant_types=("authorization_code",), redirect_uris=("https://app.example/cb",),
                 public=True, token_endpoint_auth_method="none")  # fmt: skip
    session = Session("f" * 32, user_id, now + timedelta(seconds=1), now, now + timedelta(days=1),
                      "Browser/1.0", "192.0.2.9", app.id)  # fmt: skip
    async with container_of(client).storage().begin() as uow:
        await uow.clients.add(app)
        await uow.sessions.add(session)
        await uow.tokens.add(RefreshToken("e" * 64, user_id, session.id, now + timedelta(hours=1),
                                          session.expires_at, now))  # fmt: skip
        await uow.commit()
    for path, token in (("/me/sessions", alice["access_token"]),
                        (f"/users/{user_id}/sessions", root)):  # fmt: skip
        resp = await client.get(path, headers=bearer(token))
        assert resp.status == 200, await resp.text()
        items = (await resp.json())["items"]
        assert [(s["id"], s["client_id"], s["client_name"]) for s in items] == [
            (session.id, app.id, "Photo App"),  # newest first
            (items[1]["id"], None, None),  # the JSON-API login
        ]
        assert all(set(s) == SESSION_KEYS for s in items)


async def test_disable_refuses_login_and_bearer_and_enable_restores(client: TestClient) -> None:
    root = await _root(client)
    alice = await register_and_login(client, "a@example.com")
    user_id = (await _me(client, alice["access_token"]))["id"]

    resp = await client.patch(f"/users/{user_id}", json={"disabled": True}, headers=bearer(root))
    assert resp.status == 200 and (await resp.json())["disabled"] is True
    resp = await client.post("/login", json={"email": "a@example.com", "password": PASSWORD})
    await assert_problem(resp, 403, "account_disabled")
    resp = await client.post("/login", json={"email": "a@example.com", "password": "wrong pw!"})
    await assert_problem(resp, 401, "invalid_credentials")
    resp = await client.get("/me", headers=bearer(alice["access_token"]))
    await assert_problem(resp, 401, "invalid_token")
    await assert_problem(
        await _refresh(client, alice["refresh_token"]), 401, "invalid_refresh_token"
    )

    resp = await client.patch(f"/users/{user_id}", json={"disabled": False}, headers=bearer(root))
    assert resp.status == 200 and (await resp.json())["disabled"] is False
    await _login(client, "a@example.com")


async def test_deleted_users_go_and_their_email_registers_again(client: TestClient) -> None:
    root = await _root(client)
    alice = await register_and_login(client, "a@example.com")
    user_id = (await _me(client, alice["access_token"]))["id"]
    resp = await client.delete(f"/users/{user_id}", headers=bearer(root))
    assert resp.status == 204
    await assert_problem(await client.get("/me", headers=bearer(alice["access_token"])), 401,
                         "invalid_token")  # fmt: skip
    await assert_problem(
        await _refresh(client, alice["refresh_token"]), 401, "invalid_refresh_token"
    )
    resp = await client.post("/register", json={"email": "a@example.com", "password": PASSWORD})
    assert resp.status == 201

    again = await _login(client, "a@example.com")
    resp = await client.delete("/me", json={"password": "not it at all"},
                               headers=bearer(again["access_token"]))  # fmt: skip
    await assert_problem(resp, 403, "invalid_old_password")
    await _me(client, again["access_token"])  # nothing changed
    resp = await client.delete("/me", json={"password": PASSWORD},
                               headers=bearer(again["access_token"]))  # fmt: skip
    assert resp.status == 204
    await assert_problem(await client.get("/me", headers=bearer(again["access_token"])), 401,
                         "invalid_token")  # fmt: skip


async def test_the_last_superadmin_is_neither_disabled_nor_deleted(client: TestClient) -> None:
    root = await _root(client)
    root_id = (await _me(client, root))["id"]
    resp = await client.patch(f"/users/{root_id}", json={"disabled": True}, headers=bearer(root))
    await assert_problem(resp, 409, "last_superadmin")
    await assert_problem(await client.delete(f"/users/{root_id}", headers=bearer(root)), 409,
                         "last_superadmin")  # fmt: skip
    resp = await client.delete("/me", json={"password": PASSWORD}, headers=bearer(root))
    await assert_problem(resp, 409, "last_superadmin")
    me = await _me(client, root)
    assert me["role"] == "superadmin" and me["disabled"] is False


# --------------------------------------------------------------------------- reuse interval


async def _concurrent_refreshes(client: TestClient, token: str, n: int) -> list[int]:
    responses = await asyncio.gather(*(_refresh(client, token) for _ in range(n)))
    return sorted(r.status for r in responses)


async def test_without_an_interval_one_of_n_concurrent_refreshes_wins(client: TestClient) -> None:
    pair = await register_and_login(client)
    assert await _concurrent_refreshes(client, pair["refresh_token"], 5) == [200] + [401] * 4


@pytest.fixture
async def tolerant(make_client: MakeClient) -> TestClient:
    """An app with ``auth.refresh_reuse_interval = 10`` and ``refresh_reuse_max = 2``."""
    return await make_client({"AUTHSVC_AUTH__REFRESH_REUSE_INTERVAL": "10",
                              "AUTHSVC_AUTH__REFRESH_REUSE_MAX": "2"})  # fmt: skip


async def test_inside_the_interval_two_more_rotations_then_the_family_is_revoked(
    tolerant: TestClient,
) -> None:
    pair = await register_and_login(tolerant)
    first = await _refresh(tolerant, pair["refresh_token"])
    assert first.status == 200
    responses = await asyncio.gather(*(_refresh(tolerant, pair["refresh_token"]) for _ in range(3)))
    assert sorted(r.status for r in responses) == [200, 200, 401]
    issued = [(await first.json())["refresh_token"]] + [
        (await r.json())["refresh_token"] for r in responses if r.status == 200
    ]
    for token in issued:  # the third presentation was reuse: the whole family is revoked
        await assert_problem(await _refresh(tolerant, token), 401, "invalid_refresh_token")


async def test_inside_the_interval_a_retry_gets_a_working_pair(tolerant: TestClient) -> None:
    pair = await register_and_login(tolerant)
    assert (await _refresh(tolerant, pair["refresh_token"])).status == 200
    retried = await _refresh(tolerant, pair["refresh_token"])  # the answer was lost: retry
    assert retried.status == 200
    assert (await _refresh(tolerant, (await retried.json())["refresh_token"])).status == 200


async def test_after_the_interval_a_rotated_token_is_reuse(make_client: MakeClient) -> None:
    client = await make_client({"AUTHSVC_AUTH__REFRESH_REUSE_INTERVAL": "1"})
    pair = await register_and_login(client)
    current = await _refresh(client, pair["refresh_token"])
    assert current.status == 200
    await asyncio.sleep(1.2)
    await assert_problem(
        await _refresh(client, pair["refresh_token"]), 401, "invalid_refresh_token"
    )
    token = (await current.json())["refresh_token"]
    await assert_problem(await _refresh(client, token), 401, "invalid_refresh_token")
