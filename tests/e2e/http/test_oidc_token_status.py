"""What becomes of code-flow tokens and codes when the login behind them ends, over HTTP on
SQLite and PostgreSQL (docs/reference/oauth-and-oidc.md; security review s5, findings 3, 4 and 6):

- introspection (RFC 7662 §2.2) answers ``active: false`` once the token's family ended (code
  reuse, consent revoked, password change) or its user was disabled or deleted, and gives the
  token's own ``org_id`` (the user's), never its client's;
- revocation (RFC 7009) ends a code-flow refresh token's family, takes a public client's
  ``client_id`` alone (method ``none``, advertised), changes nothing for another client's
  token, and a revoked access token is refused by userinfo too;
- an authorization code whose login ended (logout, password change, disable, a newer login
  in the same browser) is ``invalid_grant`` and issues nothing.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from aiohttp.test_utils import TestClient

from tests.e2e.helpers import ONE_PER_BACKEND, PASSWORD, bearer, container_of
from tests.e2e.oidc_helpers import (
    ORIGIN,
    Registered,
    auth_params,
    client_auth,
    code_via_browser,
    csrf_of,
    exchange,
    pkce,
    refresh,
    register_client,
    register_user,
    sign_in,
)

ROOT = "root@example.com"
NEW_PASSWORD = "another horse battery"


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend (nothing here depends on the alg)."""
    return request.param  # type: ignore[no-any-return]


async def _root(client: TestClient) -> str:
    await container_of(client).create_superadmin()(ROOT, PASSWORD)
    resp = await client.post("/login", json={"email": ROOT, "password": PASSWORD})
    assert resp.status == 200, await resp.text()
    return str((await resp.json())["access_token"])


async def _bearer_of(client: TestClient, email: str, password: str) -> dict[str, str]:
    resp = await client.post("/login", json={"email": email, "password": password})
    assert resp.status == 200, await resp.text()
    return bearer((await resp.json())["access_token"])


async def _code(
    client: TestClient, app: Registered, scope: str, email: str, password: str
) -> tuple[str, str]:
    """(code, verifier) through the hosted pages (signing in if the browser is not)."""
    verifier, challenge = pkce()
    callback = await code_via_browser(
        client, app, auth_params(app, challenge, scope=scope), email, password
    )
    assert "code" in callback, callback
    return callback["code"], verifier


async def _tokens(
    client: TestClient,
    app: Registered,
    scope: str = "openid",
    email: str = "alice@example.com",
    password: str = PASSWORD,
) -> dict[str, Any]:
    code, verifier = await _code(client, app, scope, email, password)
    resp = await exchange(client, app, code, verifier)
    assert resp.status == 200, await resp.text()
    return await resp.json()  # type: ignore[no-any-return]


async def _introspect(client: TestClient, app: Registered, token: str) -> dict[str, Any]:
    headers, form = client_auth(app)
    resp = await client.post("/oauth/introspect", data={**form, "token": token}, headers=headers)
    assert resp.status == 200, await resp.text()
    return await resp.json()  # type: ignore[no-any-return]


async def _revoke(client: TestClient, app: Registered, token: str, hint: str | None) -> Any:
    headers, form = client_auth(app)
    form = {**form, "token": token}
    if hint is not None:
        form["token_type_hint"] = hint
    return await client.post("/oauth/revoke", data=form, headers=headers)


async def _userinfo(client: TestClient, token: str) -> int:
    return (await client.get("/oauth/userinfo", headers=bearer(token))).status


async def _check_introspection(client: TestClient, root: str) -> None:
    """Finding 3: inactive after each way a family ends; the token's own org_id."""
    alice = await register_user(client)
    app = await register_client(client)
    first = (await _tokens(client, app))["access_token"]
    seen = await _introspect(client, app, first)
    assert seen["active"] is True and seen["sub"] == alice and seen["client_id"] == app.id
    assert seen["org_id"] == "default" and seen["scope"] == "openid"
    # A client of another organization than its user's (all_organizations): the answer names
    # the user's organization, the token's own org_id claim, never the client's.
    async with container_of(client).storage().begin() as uow:
        await uow.clients.update(attrs.evolve(app.record, org_id="acme"))
        await uow.commit()
    seen = await _introspect(client, app, first)
    assert seen["active"] is True and seen["org_id"] == "default"
    async with container_of(client).storage().begin() as uow:
        await uow.clients.update(app.record)
        await uow.commit()

    code, verifier = await _code(client, app, "openid", "alice@example.com", PASSWORD)
    reused = await (await exchange(client, app, code, verifier)).json()
    again = await exchange(client, app, code, verifier)
    assert again.status == 400 and (await again.json())["error"] == "invalid_grant"
    assert await _introspect(client, app, reused["access_token"]) == {"active": False}

    token = (await _tokens(client, app))["access_token"]
    alice_api = await _bearer_of(client, "alice@example.com", PASSWORD)
    resp = await client.delete(f"/me/consents/{app.id}", headers=alice_api)
    assert resp.status == 204, await resp.text()
    assert await _introspect(client, app, token) == {"active": False}

    token = (await _tokens(client, app))["access_token"]
    resp = await client.post("/me/password", headers=alice_api,
                             json={"old_password": PASSWORD, "new_password": NEW_PASSWORD})  # fmt: skip
    assert resp.status == 204, await resp.text()
    assert await _introspect(client, app, token) == {"active": False}

    token = (await _tokens(client, app, password=NEW_PASSWORD))["access_token"]
    assert (await _introspect(client, app, token))["active"] is True
    resp = await client.patch(f"/users/{alice}", json={"disabled": True}, headers=bearer(root))
    assert resp.status == 200, await resp.text()
    assert await _introspect(client, app, token) == {"active": False}
    resp = await client.patch(f"/users/{alice}", json={"disabled": False}, headers=bearer(root))
    assert resp.status == 200, await resp.text()

    token = (await _tokens(client, app, password=NEW_PASSWORD))["access_token"]
    resp = await client.delete(f"/users/{alice}", headers=bearer(root))
    assert resp.status == 204, await resp.text()
    assert await _introspect(client, app, token) == {"active": False}
    assert await _introspect(client, app, first) == {"active": False}  # ended long ago


async def _check_revocation(client: TestClient) -> None:
    """Finding 4: RFC 7009 for refresh tokens and public clients; userinfo and revocation."""
    await register_user(client, "bob@example.com")
    client.session.cookie_jar.clear()
    app = await register_client(client, skip_consent=True)
    other = await register_client(client, skip_consent=True)
    public = await register_client(client, public=True, skip_consent=True)
    scope, bob = "openid offline_access", "bob@example.com"

    tokens = await _tokens(client, app, scope, bob)
    assert await _userinfo(client, tokens["access_token"]) == 200
    resp = await _revoke(client, app, tokens["access_token"], "access_token")
    assert resp.status == 200
    assert await _userinfo(client, tokens["access_token"]) == 401
    assert await _introspect(client, app, tokens["access_token"]) == {"active": False}

    resp = await _revoke(client, other, tokens["refresh_token"], "refresh_token")
    assert resp.status == 200  # another client's token: nothing changes
    resp = await refresh(client, app, tokens["refresh_token"])
    assert resp.status == 200, await resp.text()
    renewed = await resp.json()
    assert (await _introspect(client, app, renewed["access_token"]))["active"] is True
    resp = await _revoke(client, app, renewed["refresh_token"], "refresh_token")
    assert resp.status == 200
    resp = await refresh(client, app, renewed["refresh_token"])
    assert resp.status == 400 and (await resp.json())["error"] == "invalid_grant"
    assert await _introspect(client, app, renewed["access_token"]) == {"active": False}
    assert await _userinfo(client, renewed["access_token"]) == 401

    tokens = await _tokens(client, public, scope, bob)
    resp = await client.post("/oauth/revoke", data={"client_id": public.id,
                                                    "token": tokens["refresh_token"]})  # fmt: skip
    assert resp.status == 200, await resp.text()
    resp = await refresh(client, public, tokens["refresh_token"])
    assert resp.status == 400 and (await resp.json())["error"] == "invalid_grant"
    assert await _userinfo(client, tokens["access_token"]) == 401
    resp = await client.post("/oauth/revoke", data={"client_id": app.id, "token": "x"})
    assert resp.status == 401 and (await resp.json())["error"] == "invalid_client"

    for path in ("/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"):
        meta = await (await client.get(path)).json()
        assert meta["revocation_endpoint_auth_methods_supported"] == [
            "client_secret_basic", "client_secret_post", "none", "private_key_jwt",
        ]  # fmt: skip
        assert "none" not in meta["introspection_endpoint_auth_methods_supported"]


async def test_introspection_and_revocation_follow_the_family(client: TestClient) -> None:
    """Findings 3 and 4, on one app per backend."""
    root = await _root(client)
    await _check_introspection(client, root)
    await _check_revocation(client)


async def _refused(client: TestClient, app: Registered, code: str, verifier: str) -> None:
    """The code is ``invalid_grant`` and nothing was issued."""
    resp = await exchange(client, app, code, verifier)
    assert resp.status == 400, await resp.text()
    body = await resp.json()
    assert body.get("error") == "invalid_grant" and "access_token" not in body


async def _client_sessions(client: TestClient, headers: dict[str, str]) -> list[str]:
    resp = await client.get("/me/sessions", headers=headers)
    assert resp.status == 200, await resp.text()
    return [s["client_id"] for s in (await resp.json())["items"] if s["client_id"]]


async def test_a_code_dies_with_the_login_it_came_from(client: TestClient) -> None:
    """Finding 6: a code issued before a logout, a password change, a disable or a newer login
    in the same browser is ``invalid_grant`` afterwards, and no session is started."""
    root = await _root(client)
    carol = await register_user(client, "carol@example.com")
    app = await register_client(client, skip_consent=True)
    who = "carol@example.com"

    code, verifier = await _code(client, app, "openid offline_access", who, PASSWORD)
    resp = await client.get("/ui/logout")
    assert resp.status == 200
    form = {"csrf_token": csrf_of(client)}
    resp = await client.post("/ui/logout", data=form, headers=ORIGIN, allow_redirects=False)
    assert resp.status == 303, await resp.text()
    await _refused(client, app, code, verifier)

    code, verifier = await _code(client, app, "openid offline_access", who, PASSWORD)
    resp = await client.post("/me/password", headers=await _bearer_of(client, who, PASSWORD),
                             json={"old_password": PASSWORD, "new_password": NEW_PASSWORD})  # fmt: skip
    assert resp.status == 204, await resp.text()
    await _refused(client, app, code, verifier)

    code, verifier = await _code(client, app, "openid offline_access", who, NEW_PASSWORD)
    resp = await client.patch(f"/users/{carol}", json={"disabled": True}, headers=bearer(root))
    assert resp.status == 200, await resp.text()
    await _refused(client, app, code, verifier)
    resp = await client.patch(f"/users/{carol}", json={"disabled": False}, headers=bearer(root))
    assert resp.status == 200, await resp.text()
    await _refused(client, app, code, verifier)  # enabled again: that login is still over

    old, old_verifier = await _code(client, app, "openid offline_access", who, NEW_PASSWORD)
    await sign_in(client, "/ui/signed-in", who, NEW_PASSWORD)  # a newer login, same browser
    await _refused(client, app, old, old_verifier)
    carol_api = await _bearer_of(client, who, NEW_PASSWORD)
    assert await _client_sessions(client, carol_api) == []  # nothing was issued
    code, verifier = await _code(client, app, "openid offline_access", who, NEW_PASSWORD)
    resp = await exchange(client, app, code, verifier)  # the newer login's codes work
    assert resp.status == 200, await resp.text()
    assert await _client_sessions(client, carol_api) == [app.id]
