"""The address rule of ``jwks_uri`` end to end over HTTP (docs/adr/0055-jwks-uri-address-rule.md;
docs/reference/oauth-and-oidc.md), on SQLite and PostgreSQL: a loopback, private or link-local
literal (or ``localhost``) is 422 ``validation_error`` naming ``jwks_uri`` at registration and
change; a public-looking name that resolves to 127.0.0.1 (an injected resolver: no DNS) passes
registration but fails the assertion at the token endpoint as 401 ``invalid_client``, the address
never answered; ``oauth.allow_private_jwks_uri`` lets a JWK Set on 127.0.0.1 serve; ``null`` in a
PATCH clears ``jwks`` or ``jwks_uri``, a ``private_key_jwt`` client keeping one of them."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import AsyncIterator
from typing import Any

import attrs
import jwt
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from cryptography.hazmat.primitives.asymmetric import ec
from dependency_injector import providers

from adapters.crypto.client_assertions import JwtClientAssertions
from tests.e2e.helpers import ONE_PER_BACKEND, MakeClient, assert_problem, bearer, container_of
from tests.e2e.http.test_oauth_http import Machines, machines
from tests.e2e.oidc_helpers import ISSUER
from tests.fakes import FixedResolver

BEARER_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
TOKEN = ISSUER + "/oauth/token"
OPT_OUT = {"AUTHSVC_OAUTH__ALLOW_PRIVATE_JWKS_URI": "true"}


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _jwks(key: ec.EllipticCurvePrivateKey) -> dict[str, Any]:
    public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
    return {"keys": [{**public, "kid": "k1"}]}


@pytest.fixture
async def jwks_server(key: Any) -> AsyncIterator[tuple[str, list[int]]]:
    """A loopback server of the key's JWK Set; the list counts its requests."""
    hits: list[int] = []

    async def serve(request: web.Request) -> web.Response:
        hits.append(1)
        return web.json_response(_jwks(key))

    app = web.Application()
    app.router.add_get("/jwks", serve)
    async with TestServer(app, host="127.0.0.1") as server:
        yield str(server.make_url("/jwks")), hits


def _machine(**fields: Any) -> dict[str, Any]:
    return {"name": "robot", "scopes": ["read"], "grant_types": ["client_credentials"],
            "token_endpoint_auth_method": "private_key_jwt", **fields}  # fmt: skip


def _token_form(client_id: str, key: Any) -> dict[str, str]:
    now = int(time.time())
    claims = {"iss": client_id, "sub": client_id, "aud": TOKEN, "iat": now, "exp": now + 60,
              "jti": secrets.token_urlsafe(16)}  # fmt: skip
    assertion = jwt.encode(claims, key, "ES256", {"kid": "k1"})
    return {"grant_type": "client_credentials", "client_assertion_type": BEARER_TYPE,
            "client_assertion": assertion}  # fmt: skip


async def _register(m: Machines, **fields: Any) -> dict[str, Any]:
    resp = await m.http.post("/oauth/clients", json=_machine(**fields), headers=bearer(m.admin))
    assert resp.status == 201, await resp.text()
    return await resp.json()  # type: ignore[no-any-return]


async def _auth_failures(m: Machines, client_id: str) -> list[str]:
    resp = await m.http.get("/audit-events", params={"type": "client.auth_failed"},
                            headers=bearer(m.admin))  # fmt: skip
    items = (await resp.json())["items"]
    return [e["details"]["reason"] for e in items if e["details"].get("client_id") == client_id]


@pytest.mark.parametrize(
    "uri",
    ["https://127.0.0.1/jwks", "https://10.0.0.7/jwks", "https://169.254.169.254/latest",
     "https://[::1]:8443/jwks", "https://localhost/jwks", "http://127.0.0.1:9/jwks"],
)  # fmt: skip
async def test_a_private_literal_is_refused_at_registration_and_change(
    make_client: MakeClient, key: Any, uri: str
) -> None:
    m = await machines(make_client)
    resp = await m.http.post("/oauth/clients", json=_machine(jwks_uri=uri),
                             headers=bearer(m.admin))  # fmt: skip
    problem = await assert_problem(resp, 422, "validation_error")
    assert [e["field"] for e in problem["errors"]] == ["jwks_uri"]
    made = await _register(m, jwks=_jwks(key))
    resp = await m.http.patch(f"/oauth/clients/{made['client_id']}",
                              json={"jwks": None, "jwks_uri": uri}, headers=bearer(m.admin))  # fmt: skip
    problem = await assert_problem(resp, 422, "validation_error")
    assert [e["field"] for e in problem["errors"]] == ["jwks_uri"]
    resp = await m.http.get(f"/oauth/clients/{made['client_id']}", headers=bearer(m.admin))
    assert (await resp.json())["jwks"] == made["jwks"]  # nothing changed


async def test_a_name_resolving_to_loopback_fails_the_assertion(
    make_client: MakeClient, key: Any, jwks_server: tuple[str, list[int]]
) -> None:
    m = await machines(make_client)
    container = container_of(m.http)
    resolver = FixedResolver("127.0.0.1")
    container.client_assertions.override(
        providers.Object(JwtClientAssertions(container.oauth_settings(), resolver))
    )
    uri, hits = jwks_server
    named = uri.replace("http://127.0.0.1", "https://keys.example")
    made = await _register(m, jwks_uri=named)  # a name: judged at fetch time
    resp = await m.http.post("/oauth/token", data=_token_form(made["client_id"], key))
    assert resp.status == 401, await resp.text()
    text = await resp.text()
    assert json.loads(text)["error"] == "invalid_client"
    assert "127.0.0.1" not in text and "keys.example" not in text
    assert resolver.asked == ["keys.example"] and hits == []
    assert await _auth_failures(m, made["client_id"]) == ["assertion_jwks_uri_private"]


async def test_the_opt_out_lets_a_loopback_jwks_uri_serve(
    make_client: MakeClient, key: Any, jwks_server: tuple[str, list[int]]
) -> None:
    m = await machines(make_client, OPT_OUT)
    uri, hits = jwks_server
    made = await _register(m, jwks_uri=uri)
    assert made["jwks_uri"] == uri
    resp = await m.http.post("/oauth/token", data=_token_form(made["client_id"], key))
    assert resp.status == 200, await resp.text()
    assert len(hits) == 1


async def test_without_the_opt_out_a_stored_loopback_uri_is_never_fetched(
    make_client: MakeClient, key: Any, jwks_server: tuple[str, list[int]]
) -> None:
    """A client registered before the rule (stored as is) still cannot make the server call
    a loopback address: the literal is refused before connecting."""
    m = await machines(make_client)
    uri, hits = jwks_server
    made = await _register(m, jwks=_jwks(key))
    async with container_of(m.http).storage().begin() as uow:
        record = await uow.clients.get(made["client_id"])
        assert record is not None
        await uow.clients.update(attrs.evolve(record, jwks=None, jwks_uri=uri))
        await uow.commit()
    resp = await m.http.post("/oauth/token", data=_token_form(made["client_id"], key))
    assert resp.status == 401 and "127.0.0.1" not in await resp.text()
    assert hits == []
    assert await _auth_failures(m, made["client_id"]) == ["assertion_jwks_uri_private"]


async def test_patch_null_clears_jwks_and_jwks_uri(make_client: MakeClient, key: Any) -> None:
    m = await machines(make_client)
    made = await _register(m, jwks=_jwks(key))
    path, auth = f"/oauth/clients/{made['client_id']}", bearer(m.admin)
    # private_key_jwt keeps exactly one of the two
    resp = await m.http.patch(path, json={"jwks": None}, headers=auth)
    problem = await assert_problem(resp, 422, "validation_error")
    assert [e["field"] for e in problem["errors"]] == ["jwks"]
    # switch to a jwks_uri: jwks cleared in the same change
    resp = await m.http.patch(
        path, json={"jwks": None, "jwks_uri": "https://keys.example/jwks"}, headers=auth
    )
    assert resp.status == 200, await resp.text()
    body = await resp.json()
    assert body["jwks_uri"] == "https://keys.example/jwks" and "jwks" not in body
    # and back
    resp = await m.http.patch(path, json={"jwks_uri": None, "jwks": _jwks(key)}, headers=auth)
    assert resp.status == 200, await resp.text()
    body = await resp.json()
    assert "jwks_uri" not in body and body["jwks"]["keys"][0]["kid"] == "k1"
    # another method: the keys may go
    resp = await m.http.patch(
        path, json={"token_endpoint_auth_method": "client_secret_basic", "jwks": None},
        headers=auth,
    )  # fmt: skip
    assert resp.status == 200, await resp.text()
    assert "jwks" not in await resp.json()
    stored = await (await m.http.get(path, headers=auth)).json()
    assert "jwks" not in stored and "jwks_uri" not in stored
    # null stays refused for the other fields, and at registration
    resp = await m.http.patch(path, json={"logo_uri": None}, headers=auth)
    problem = await assert_problem(resp, 422, "validation_error")
    assert [e["field"] for e in problem["errors"]] == ["logo_uri"]
    resp = await m.http.post("/oauth/clients", json=_machine(jwks=None), headers=auth)
    await assert_problem(resp, 422, "validation_error")
