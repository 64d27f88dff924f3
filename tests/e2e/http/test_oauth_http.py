"""OAuth 2.1 for machines over HTTP (docs/reference/oauth-and-oidc.md), on SQLite and PostgreSQL: an
org_admin registers a client; the client gets an RFC 9068 token that PyJWT verifies through the
JWKS; scopes and resources are checked; client authentication (basic or post) fails alike for
an unknown client and a wrong secret; rotation, revocation, introspection, disabling and
deletion behave as section 14 says; errors are RFC 6749 JSON with ``Cache-Control: no-store``."""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import quote

import attrs
import jwt
import pytest
from aiohttp.test_utils import TestClient

from tests.e2e.helpers import (
    ONE_PER_BACKEND,
    PASSWORD,
    MakeClient,
    assert_problem,
    bearer,
    container_of,
    register_and_login,
)

ROOT = "root@example.com"
API = "https://api.example.com"


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend."""
    return request.param  # type: ignore[no-any-return]


def basic(client_id: str, secret: str) -> dict[str, str]:
    """``Authorization: Basic`` of RFC 6749 §2.3.1 (id and secret form-urlencoded first)."""
    raw = f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()
    return {"Authorization": "Basic " + base64.b64encode(raw).decode()}


@attrs.define
class Machines:
    """An app with a superadmin, an org_admin of the home organization and helpers."""

    http: TestClient
    admin: str = ""
    root: str = ""

    async def register(self, token: str, **body: Any) -> dict[str, Any]:
        body = {"name": "svc", "scopes": ["read", "write"], **body}
        resp = await self.http.post("/oauth/clients", json=body, headers=bearer(token))
        assert resp.status == 201, await resp.text()
        assert resp.headers["Cache-Control"] == "no-store"
        return await resp.json()  # type: ignore[no-any-return]

    async def post(self, path: str, form: dict[str, str], headers: dict[str, str] | None = None
                   ) -> Any:  # fmt: skip
        resp = await self.http.post(path, data=form, headers=headers or {})
        assert resp.headers.get("Cache-Control") == "no-store", (path, resp.headers)
        return resp

    async def token(self, client: dict[str, Any], **form: str) -> Any:
        return await self.post("/oauth/token", {"grant_type": "client_credentials", **form},
                               basic(client["client_id"], client["client_secret"]))  # fmt: skip

    async def granted(self, client: dict[str, Any], **form: str) -> dict[str, Any]:
        resp = await self.token(client, **form)
        assert resp.status == 200, await resp.text()
        return await resp.json()  # type: ignore[no-any-return]

    async def introspect(self, caller: dict[str, Any], token: str) -> dict[str, Any]:
        resp = await self.post("/oauth/introspect", {"token": token},
                               basic(caller["client_id"], caller["client_secret"]))  # fmt: skip
        assert resp.status == 200, await resp.text()
        return await resp.json()  # type: ignore[no-any-return]


async def oauth_error(resp: Any, status: int, error: str) -> None:
    """An RFC 6749 §5.2 error answer."""
    assert resp.status == status, await resp.text()
    assert resp.headers["Cache-Control"] == "no-store"
    body = await resp.json()
    assert body["error"] == error and isinstance(body["error_description"], str)
    if status == 401:
        assert resp.headers["WWW-Authenticate"] == 'Basic realm="authsvc"'


SHARED_RESOURCES = (
    f'[{{audience = "{API}", scopes = ["read", "write"]}}, '
    '{audience = "billing", scopes = ["read", "write"]}]'
)
"""``oauth.resources`` of these tests: two resource servers shared by every organization."""


SHARED_SCOPES = "read,write"
"""``oauth.shared_scopes`` of these tests: what an org_admin's clients of ``auth.audience``
may hold."""


async def machines(make_client: MakeClient, env: dict[str, str] | None = None) -> Machines:
    http = await make_client({"AUTHSVC_OAUTH__RESOURCES": SHARED_RESOURCES,
                              "AUTHSVC_OAUTH__SHARED_SCOPES": SHARED_SCOPES, **(env or {})})  # fmt: skip
    m = Machines(http)
    await container_of(http).create_superadmin()(ROOT, PASSWORD)
    m.root = (await (await http.post("/login", json={"email": ROOT, "password": PASSWORD}))
              .json())["access_token"]  # fmt: skip
    admin = await register_and_login(http, "admin@example.com")
    await container_of(http).set_role_by_operator()("admin@example.com", "org_admin")
    m.admin = admin["access_token"]
    return m


async def test_a_client_gets_a_token_a_resource_server_verifies_through_the_jwks(
    make_client: MakeClient,
) -> None:
    m = await machines(make_client)
    client = await m.register(m.admin, audience=[API, "billing"])
    assert set(client) >= {"client_id", "client_secret", "org_id", "scopes", "audience"}
    answer = await m.granted(client)
    assert (answer["token_type"], answer["expires_in"], answer["scope"]) == ("Bearer", 300,
                                                                            "read write")  # fmt: skip
    token = answer["access_token"]
    assert jwt.get_unverified_header(token)["typ"] == "at+jwt"
    jwks = await (await m.http.get("/.well-known/jwks.json")).json()
    keys = {k.key_id: k for k in jwt.PyJWKSet.from_dict(jwks).keys}
    key = keys[jwt.get_unverified_header(token)["kid"]]
    issuer = container_of(m.http).auth_settings().current.issuer
    claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=API, issuer=issuer)
    assert claims["sub"] == claims["client_id"] == client["client_id"]
    assert claims["scope"] == "read write" and claims["org_id"] == client["org_id"]
    assert claims["exp"] - claims["iat"] == 300 and claims["jti"]
    # Our own user routes refuse it: it is for other resource servers.
    await assert_problem(await m.http.get("/me", headers=bearer(token)), 401, "invalid_token")
    await assert_problem(await m.http.get("/oauth/clients", headers=bearer(token)), 401,
                         "invalid_token")  # fmt: skip
    # client_secret_post works too; both at once is a bad request.
    form = {"grant_type": "client_credentials", "client_id": client["client_id"],
            "client_secret": client["client_secret"]}  # fmt: skip
    assert (await m.post("/oauth/token", form)).status == 200
    both = basic(client["client_id"], client["client_secret"])
    await oauth_error(await m.post("/oauth/token", form, both), 400, "invalid_request")


async def test_scopes_and_resources_are_checked(make_client: MakeClient) -> None:
    m = await machines(make_client)
    client = await m.register(m.admin, audience=[API, "billing"])
    assert (await m.granted(client, scope="read"))["scope"] == "read"
    await oauth_error(await m.token(client, scope="read admin"), 400, "invalid_scope")
    await oauth_error(await m.token(client, scope=""), 400, "invalid_scope")
    token = (await m.granted(client, resource="billing"))["access_token"]
    assert jwt.decode(token, options={"verify_signature": False})["aud"] == "billing"
    await oauth_error(await m.token(client, resource="https://evil.example"), 400,
                      "invalid_target")  # fmt: skip


async def test_client_authentication_fails_alike_and_is_audited(make_client: MakeClient) -> None:
    m = await machines(make_client)
    client = await m.register(m.admin)
    wrong = {**client, "client_secret": "not-the-secret"}
    unknown = {**client, "client_id": "f" * 32}
    bodies = []
    for who in (wrong, unknown, {**client, "client_id": "not hex at all"}):
        resp = await m.token(who)
        await oauth_error(resp, 401, "invalid_client")
        bodies.append(await resp.json())
    assert bodies[0] == bodies[1] == bodies[2]
    for headers in ({"Authorization": "Basic !!!"}, {"Authorization": "Bearer x"}, {}):
        resp = await m.post("/oauth/token", {"grant_type": "client_credentials"}, headers)
        await oauth_error(resp, 401, "invalid_client")
    await oauth_error(await m.token(client, grant_type="password"), 400,
                      "unsupported_grant_type")  # fmt: skip
    resp = await m.http.post("/oauth/token", json={"grant_type": "client_credentials"},
                             headers=basic(client["client_id"], client["client_secret"]))  # fmt: skip
    await oauth_error(resp, 400, "invalid_request")
    repeated = "grant_type=client_credentials&grant_type=client_credentials"
    resp = await m.http.post("/oauth/token", data=repeated, headers={
        **basic(client["client_id"], client["client_secret"]),
        "Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip
    await oauth_error(resp, 400, "invalid_request")
    page = await (await m.http.get("/audit-events?type=client.auth_failed",
                                   headers=bearer(m.root))).json()  # fmt: skip
    reasons = sorted(e["details"]["reason"] for e in page["items"])
    assert reasons[:3] == ["unknown_client", "unknown_client", "wrong_secret"]
    assert "not-the-secret" not in str(page)


@pytest.mark.parametrize(("grace", "old_works"), [("0", False), ("60", True)])
async def test_rotation_and_the_grace_of_the_old_secret(
    make_client: MakeClient, grace: str, old_works: bool
) -> None:
    m = await machines(make_client, {"AUTHSVC_OAUTH__SECRET_GRACE": grace})
    client = await m.register(m.admin)
    resp = await m.http.post(f"/oauth/clients/{client['client_id']}/secret",
                             headers=bearer(m.admin))  # fmt: skip
    assert resp.status == 200
    new = {**client, "client_secret": (await resp.json())["client_secret"]}
    assert (await m.token(new)).status == 200
    assert ((await m.token(client)).status == 200) is old_works
    listed = await (await m.http.get(f"/oauth/clients/{client['client_id']}",
                                     headers=bearer(m.admin))).json()  # fmt: skip
    assert listed["secret_rotated_at"] is not None and "client_secret" not in listed


async def test_revocation_and_introspection(make_client: MakeClient) -> None:
    m = await machines(make_client)
    mine, sibling = await m.register(m.admin), await m.register(m.admin, name="sibling")
    foreign = await m.register(m.root, org_id="globex")
    token = (await m.granted(mine))["access_token"]

    seen = await m.introspect(sibling, token)
    assert seen["active"] is True and seen["client_id"] == mine["client_id"]
    assert seen["scope"] == "read write" and seen["token_type"] == "Bearer"
    assert {"exp", "iat", "iss", "aud", "sub"} <= set(seen)
    assert await m.introspect(foreign, token) == {"active": False}  # another organization
    user_token = (await register_and_login(m.http, "user@example.com"))["access_token"]
    assert await m.introspect(mine, user_token) == {"active": False}
    assert await m.introspect(mine, "not a token") == {"active": False}

    # Revoking another client's token changes nothing; revoking one's own ends it at once.
    resp = await m.post("/oauth/revoke", {"token": token},
                        basic(sibling["client_id"], sibling["client_secret"]))  # fmt: skip
    assert resp.status == 200
    assert (await m.introspect(sibling, token))["active"] is True
    resp = await m.post("/oauth/revoke", {"token": token, "token_type_hint": "access_token"},
                        basic(mine["client_id"], mine["client_secret"]))  # fmt: skip
    assert resp.status == 200
    assert await m.introspect(sibling, token) == {"active": False}
    resp = await m.post("/oauth/revoke", {"token": "garbage"},
                        basic(mine["client_id"], mine["client_secret"]))  # fmt: skip
    assert resp.status == 200
    await oauth_error(await m.post("/oauth/revoke", {},
                                   basic(mine["client_id"], mine["client_secret"])),
                      400, "invalid_request")  # fmt: skip

    # Disabling a client: its live tokens go inactive and it gets no new one; deleting likewise.
    live = (await m.granted(mine))["access_token"]
    resp = await m.http.patch(f"/oauth/clients/{mine['client_id']}", json={"disabled": True},
                              headers=bearer(m.admin))  # fmt: skip
    assert resp.status == 200
    assert await m.introspect(sibling, live) == {"active": False}
    await oauth_error(await m.token(mine), 401, "invalid_client")
    other = (await m.granted(sibling))["access_token"]
    resp = await m.http.delete(f"/oauth/clients/{sibling['client_id']}", headers=bearer(m.admin))
    assert resp.status == 204
    third = await m.register(m.admin, name="third")
    assert await m.introspect(third, other) == {"active": False}
    types = {e["type"] for e in (await (await m.http.get(
        "/audit-events?limit=200", headers=bearer(m.root))).json())["items"]}  # fmt: skip
    assert {"client.token_issued", "token.revoked", "client.deleted"} <= types


async def test_metadata_lists_the_endpoints(client: TestClient) -> None:
    resp = await client.get("/.well-known/oauth-authorization-server")
    assert resp.status == 200
    doc = await resp.json()
    issuer = doc["issuer"]
    assert doc["token_endpoint"] == issuer + "/oauth/token"
    assert doc["revocation_endpoint"] == issuer + "/oauth/revoke"
    assert doc["introspection_endpoint"] == issuer + "/oauth/introspect"
    assert doc["jwks_uri"] == issuer + "/.well-known/jwks.json"
    # docs/reference/oauth-and-oidc.md: the code flow's grants, and "none" for public clients.
    assert doc["grant_types_supported"] == [
        "authorization_code",
        "refresh_token",
        "client_credentials",
        "urn:ietf:params:oauth:grant-type:device_code",
    ]
    assert doc["device_authorization_endpoint"] == issuer + "/oauth/device_authorization"
    assert doc["response_types_supported"] == ["code"]
    assert doc["authorization_endpoint"] == issuer + "/oauth/authorize"
    assert set(doc["token_endpoint_auth_methods_supported"]) == {
        "client_secret_basic",
        "client_secret_post",
        "none",
        "private_key_jwt",
    }
    assert "none" not in doc["token_endpoint_auth_signing_alg_values_supported"]


async def test_code_flow_fields_are_registered_shown_and_checked(make_client: MakeClient) -> None:
    """docs/reference/oauth-and-oidc.md: the registry takes the code-flow fields (422 naming the
    field for a bad one), GET shows them, a public client gets no secret; the client credentials
    grant refuses a public client (invalid_client) and one without that grant
    (unauthorized_client)."""
    m = await machines(make_client)
    app = await m.register(
        m.admin, grant_types=["authorization_code", "refresh_token"],
        redirect_uris=["https://app.example/cb"], logo_uri="https://app.example/logo.png",
        id_token_signed_response_alg="RS256",
    )  # fmt: skip
    shown = await (await m.http.get(f"/oauth/clients/{app['client_id']}",
                                    headers=bearer(m.admin))).json()  # fmt: skip
    assert shown["grant_types"] == ["authorization_code", "refresh_token"]
    assert shown["redirect_uris"] == ["https://app.example/cb"] and shown["public"] is False
    assert shown["token_endpoint_auth_method"] == "client_secret_basic"
    assert shown["logo_uri"] == "https://app.example/logo.png" and shown["tos_uri"] is None
    assert shown["id_token_signed_response_alg"] == "RS256"
    await oauth_error(await m.token(app), 400, "unauthorized_client")
    spa = await m.register(m.admin, public=True, redirect_uris=["http://127.0.0.1/cb"])
    assert "client_secret" not in spa and spa["token_endpoint_auth_method"] == "none"
    await oauth_error(await m.token({**spa, "client_secret": ""}), 401, "invalid_client")
    for body, field in (
        ({"grant_types": ["authorization_code"]}, "redirect_uris"),
        ({"grant_types": ["authorization_code"], "redirect_uris": ["http://evil.example/cb"]},
         "redirect_uris"),
        ({"public": True, "grant_types": ["client_credentials"]}, "grant_types"),
        ({"id_token_signed_response_alg": "EdDSA", "grant_types": ["authorization_code"],
          "redirect_uris": ["https://app.example/cb"]}, "id_token_signed_response_alg"),
    ):  # fmt: skip
        resp = await m.http.post("/oauth/clients", json={"name": "x", "scopes": [], **body},
                                 headers=bearer(m.admin))  # fmt: skip
        assert resp.status == 422, await resp.text()
        assert [e["field"] for e in (await resp.json())["errors"]] == [field]
