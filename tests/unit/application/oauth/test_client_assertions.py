"""``private_key_jwt`` client authentication (RFC 7523 §3; docs/reference/oauth-and-oidc.md) through
the container's ``CodeClientAuthenticator`` and the real ``JwtClientAssertions``, over memory
storage and a fake clock: a good assertion passes once; a wrong ``aud``, ``iss``/``sub``, a reused
``jti``, an expired or too long-lived one, a bad signature, ``alg: none`` and HMAC are refused as
``invalid_client`` and audited; keys come inline or from a ``jwks_uri`` (a loopback server,
reached only with ``oauth.allow_private_jwks_uri``: without it a loopback literal, or a name
resolving to loopback, is ``assertion_jwks_uri_private`` before any byte is sent — ADR 0055)."""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import jwt
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from cryptography.hazmat.primitives.asymmetric import ec
from dependency_injector import providers

from adapters.crypto.client_assertions import JwtClientAssertions
from application.audit.query import AuditQuery
from application.oauth.grants import OAuthError
from application.shared.settings import OAuthSettings
from domain.clients import Client
from tests.fakes import FixedResolver
from tests.unit.application.harness import Harness, build_harness

ISSUER = "https://auth.example"
TOKEN = ISSUER + "/oauth/token"
AUDIENCES = (ISSUER, TOKEN)


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    return build_harness(tmp_path, auth={"issuer": ISSUER})


@pytest.fixture
def key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _jwks(key: ec.EllipticCurvePrivateKey, kid: str = "k1") -> dict[str, Any]:
    public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
    return {"keys": [{**public, "kid": kid, "use": "sig"}]}


def _assertion(
    harness: Harness, client: Client, key: Any, alg: str = "ES256", kid: str = "k1",
    **claims: Any,
) -> str:  # fmt: skip
    now = int(harness.clock.now().timestamp())
    body = {"iss": client.id, "sub": client.id, "aud": TOKEN, "iat": now, "exp": now + 60,
            "jti": secrets.token_urlsafe(16)}  # fmt: skip
    body.update(claims)
    return jwt.encode({k: v for k, v in body.items() if v is not None}, key, alg, {"kid": kid})


async def _client(harness: Harness, key: Any, **fields: Any) -> Client:
    values = {"token_endpoint_auth_method": "private_key_jwt",
              "jwks": json.dumps(_jwks(key))} | fields  # fmt: skip
    return await harness.add_client(**values)


async def _authenticate(harness: Harness, client_id: str, assertion: str) -> Client:
    authenticator = harness.container.code_client_authenticator()
    found: Client = await authenticator.authenticate(
        client_id, assertion, "private_key_jwt", AUDIENCES
    )
    return found


async def _refused(harness: Harness, client_id: str, assertion: str) -> str:
    """The refusal's audited reason (the clock moves a millisecond first: the newest row is
    this one)."""
    harness.clock.advance(0.001)
    with pytest.raises(OAuthError) as refused:
        await _authenticate(harness, client_id, assertion)
    assert refused.value.error == "invalid_client" and refused.value.status == 401
    async with harness.storage.read() as uow:
        rows = await uow.audit.list_page(AuditQuery(type="client.auth_failed"), None, 50)
    return str(rows[0].details_dict()["reason"])


async def test_a_good_assertion_authenticates_once(harness: Harness, key: Any) -> None:
    client = await _client(harness, key)
    assertion = _assertion(harness, client, key)
    assert (await _authenticate(harness, client.id, assertion)).id == client.id
    assert await _refused(harness, client.id, assertion) == "assertion_replay"  # jti used
    # the client_id may be left out: the assertion's iss names the client
    assert (await _authenticate(harness, "", _assertion(harness, client, key))).id == client.id
    issuer_aud = _assertion(harness, client, key, aud=[ISSUER, "https://other"])
    assert (await _authenticate(harness, client.id, issuer_aud)).id == client.id


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"aud": "https://other.example/token"}, "assertion_aud"),
        ({"iss": "f" * 32}, "assertion_iss"),
        ({"sub": "someone"}, "assertion_sub"),
        ({"exp": None}, "assertion_exp"),
        ({"jti": None}, "assertion_jti"),
    ],
)
async def test_wrong_claims_are_refused(
    harness: Harness, key: Any, claims: dict[str, Any], reason: str
) -> None:
    client = await _client(harness, key)
    assert await _refused(harness, client.id, _assertion(harness, client, key, **claims)) == reason


async def test_expired_and_long_lived_assertions_are_refused(harness: Harness, key: Any) -> None:
    client = await _client(harness, key)
    now = int(harness.clock.now().timestamp())
    expired = _assertion(harness, client, key, exp=now)
    assert await _refused(harness, client.id, expired) == "assertion_exp"
    long_lived = _assertion(harness, client, key, exp=now + 301)
    assert await _refused(harness, client.id, long_lived) == "assertion_exp"
    harness.clock.advance(61)
    late = _assertion(harness, client, key)
    harness.clock.advance(61)
    assert await _refused(harness, client.id, late) == "assertion_exp"


async def test_a_bad_signature_none_and_hmac_are_refused(harness: Harness, key: Any) -> None:
    client = await _client(harness, key)
    other = ec.generate_private_key(ec.SECP256R1())
    forged = _assertion(harness, client, other)
    assert await _refused(harness, client.id, forged) == "assertion_signature"
    unsigned = _assertion(harness, client, None, alg="none")
    assert await _refused(harness, client.id, unsigned) == "assertion_alg"
    hmac = _assertion(harness, client, "a-shared-secret-of-enough-length!!", alg="HS256")
    assert await _refused(harness, client.id, hmac) == "assertion_alg"
    assert await _refused(harness, client.id, "not a jwt") == "assertion_malformed"


async def test_only_a_private_key_jwt_client_may_use_an_assertion(
    harness: Harness, key: Any
) -> None:
    client = await _client(harness, key, token_endpoint_auth_method="client_secret_basic")
    assertion = _assertion(harness, client, key)
    assert await _refused(harness, client.id, assertion) == "wrong_method"
    assert await _refused(harness, "0" * 32, assertion) == "unknown_client"


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


async def test_keys_from_a_jwks_uri_are_fetched_and_cached(
    tmp_path: Path, key: Any, jwks_server: tuple[str, list[int]]
) -> None:
    harness = build_harness(
        tmp_path, auth={"issuer": ISSUER}, oauth=OAuthSettings(allow_private_jwks_uri=True)
    )
    uri, hits = jwks_server
    client = await _client(harness, key, jwks=None, jwks_uri=uri)
    for _ in range(3):
        assert (await _authenticate(harness, client.id, _assertion(harness, client, key))).id
    assert len(hits) == 1
    gone = await _client(harness, key, jwks=None, jwks_uri=uri.replace("/jwks", "/none"))
    assert await _refused(harness, gone.id, _assertion(harness, gone, key)) == "assertion_keys"


async def test_a_loopback_jwks_uri_is_refused_without_the_opt_out(
    harness: Harness, key: Any, jwks_server: tuple[str, list[int]]
) -> None:
    uri, hits = jwks_server  # http://127.0.0.1:port/jwks, stored before the rule
    client = await _client(harness, key, jwks=None, jwks_uri=uri)
    reason = await _refused(harness, client.id, _assertion(harness, client, key))
    assert reason == "assertion_jwks_uri_private" and hits == []


@pytest.mark.parametrize("allow", [False, True])
async def test_a_name_resolving_to_loopback_is_refused_after_resolution(
    tmp_path: Path, key: Any, jwks_server: tuple[str, list[int]], allow: bool
) -> None:
    """``keys.example`` looks public; the resolver (injected: no DNS) answers 127.0.0.1, where
    the JWK Set is served. Without the opt-out the fetch stops in the resolver; with it the keys
    are fetched from there."""
    harness = build_harness(
        tmp_path, auth={"issuer": ISSUER}, oauth=OAuthSettings(allow_private_jwks_uri=allow)
    )
    resolver = FixedResolver("127.0.0.1")
    settings = harness.container.oauth_settings()
    harness.container.client_assertions.override(
        providers.Object(JwtClientAssertions(settings, resolver))
    )
    uri, hits = jwks_server
    named = uri.replace("127.0.0.1", "keys.example")
    client = await _client(harness, key, jwks=None, jwks_uri=named)
    try:
        if allow:
            assert (await _authenticate(harness, client.id, _assertion(harness, client, key))).id
            assert len(hits) == 1
        else:
            reason = await _refused(harness, client.id, _assertion(harness, client, key))
            assert reason == "assertion_jwks_uri_private" and hits == []
        assert resolver.asked == ["keys.example"]
    finally:
        await harness.container.client_assertions().close()
