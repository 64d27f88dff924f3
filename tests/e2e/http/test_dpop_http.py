"""DPoP at the token endpoint over HTTP (RFC 9449; docs/reference/oauth-and-oidc.md), on SQLite and
PostgreSQL: a good proof binds the token to its key (``cnf.jkt``, ``token_type: DPoP``,
introspection says so); each broken rule is refused with ``invalid_dpop_proof`` and counted;
a client with ``require_dpop`` gets nothing without a proof."""

from __future__ import annotations

import base64
import hashlib
import json
import time
import uuid
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm
from multidict import CIMultiDict

from tests.e2e.helpers import ONE_PER_BACKEND, MakeClient, container_of
from tests.e2e.http.test_oauth_http import Machines, basic, machines, oauth_error


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend."""
    return request.param  # type: ignore[no-any-return]


def public_jwk(key: ec.EllipticCurvePrivateKey) -> dict[str, Any]:
    return json.loads(ECAlgorithm.to_jwk(key.public_key()))  # type: ignore[no-any-return]


def thumbprint(jwk: dict[str, Any]) -> str:
    """RFC 7638 for an EC key, computed here independently of the service."""
    canonical = json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"),
                           sort_keys=True)  # fmt: skip
    return (
        base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode()
    )


def proof(key: ec.EllipticCurvePrivateKey, url: str, **changes: Any) -> str:
    """A DPoP proof for ``POST url`` signed by ``key``; ``changes`` break one rule."""
    claims = {"htm": "POST", "htu": url, "iat": int(time.time()), "jti": uuid.uuid4().hex}
    claims.update(changes.pop("claims", {}))
    headers = {"typ": "dpop+jwt", "jwk": public_jwk(key), **changes.pop("headers", {})}
    signer = changes.pop("signer", key)
    return jwt.encode(claims, signer, algorithm=changes.pop("alg", "ES256"), headers=headers)


def _unsigned(url: str, key: ec.EllipticCurvePrivateKey) -> str:
    def part(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    header = {"typ": "dpop+jwt", "alg": "none", "jwk": public_jwk(key)}
    body = {"htm": "POST", "htu": url, "iat": int(time.time()), "jti": uuid.uuid4().hex}
    return f"{part(header)}.{part(body)}."


def endpoint(m: Machines) -> str:
    """The token endpoint's URL under the configured ``auth.issuer`` (what ``htu`` must name)."""
    return container_of(m.http).auth_settings().current.issuer.rstrip("/") + "/oauth/token"


async def dpop_token(
    m: Machines, client: dict[str, Any], proofs: list[str], host: str | None = None
) -> Any:
    headers = basic(client["client_id"], client["client_secret"])
    if host is not None:
        headers["Host"] = host
    data = {"grant_type": "client_credentials"}
    hdrs = [*headers.items(), *(("DPoP", p) for p in proofs)]
    return await m.http.post("/oauth/token", data=data, headers=CIMultiDict(hdrs))


async def test_a_good_proof_binds_the_token_and_a_replay_is_refused(
    make_client: MakeClient,
) -> None:
    m = await machines(make_client)
    client = await m.register(m.admin)
    url = endpoint(m)
    key = ec.generate_private_key(ec.SECP256R1())
    good = proof(key, url)
    resp = await dpop_token(m, client, [good])
    assert resp.status == 200, await resp.text()
    answer = await resp.json()
    assert answer["token_type"] == "DPoP"
    claims = jwt.decode(answer["access_token"], options={"verify_signature": False})
    assert claims["cnf"] == {"jkt": thumbprint(public_jwk(key))}
    seen = await m.introspect(client, answer["access_token"])
    assert seen["token_type"] == "DPoP" and seen["cnf"] == claims["cnf"]
    await oauth_error(await dpop_token(m, client, [good]), 400, "invalid_dpop_proof")  # replay
    # Without a proof the same client gets a plain Bearer token (it does not require DPoP).
    assert (await m.granted(client))["token_type"] == "Bearer"


async def test_each_broken_rule_is_refused_and_counted(make_client: MakeClient) -> None:
    m = await machines(make_client)
    client = await m.register(m.admin)
    url = endpoint(m)
    key, other = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    private = json.loads(ECAlgorithm.to_jwk(key))  # with "d"
    broken = {
        "htm": proof(key, url, claims={"htm": "GET"}),
        "htu": proof(key, "https://elsewhere.example/oauth/token"),
        "iat (old)": proof(key, url, claims={"iat": int(time.time()) - 120}),
        "iat (future)": proof(key, url, claims={"iat": int(time.time()) + 120}),
        "typ": proof(key, url, headers={"typ": "JWT"}),
        "alg none": _unsigned(url, key),
        "alg HS256": jwt.encode(
            {"htm": "POST", "htu": url, "iat": int(time.time()), "jti": "x"},
            "secret-key-of-32-bytes-or-more!!",
            algorithm="HS256",
            headers={"typ": "dpop+jwt", "jwk": {"kty": "oct", "k": "c2VjcmV0"}},
        ),
        "private jwk": proof(key, url, headers={"jwk": private}),
        "another key's signature": proof(key, url, signer=other),
        "no jti": proof(key, url, claims={"jti": None}),
        "garbage": "not.a.proof",
    }
    for bad in broken.values():
        await oauth_error(await dpop_token(m, client, [bad]), 400, "invalid_dpop_proof")
    await oauth_error(await dpop_token(m, client, [proof(key, url), proof(key, url)]), 400,
                      "invalid_dpop_proof")  # fmt: skip
    metrics = await (await m.http.get("/actuator/metrics")).text()
    refused = sum(
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith("authsvc_dpop_proof_failures_total{")
    )
    assert refused == len(broken)


async def test_a_client_that_requires_dpop_gets_nothing_without_a_proof(
    make_client: MakeClient,
) -> None:
    m = await machines(make_client)
    client = await m.register(m.admin, require_dpop=True)
    await oauth_error(await m.token(client), 400, "invalid_dpop_proof")
    url = endpoint(m)
    resp = await dpop_token(m, client, [proof(ec.generate_private_key(ec.SECP256R1()), url)])
    assert resp.status == 200 and (await resp.json())["token_type"] == "DPoP"


async def test_the_metadata_lists_the_proof_algorithms(make_client: MakeClient) -> None:
    m = await machines(make_client)
    doc = await (await m.http.get("/.well-known/oauth-authorization-server")).json()
    assert "ES256" in doc["dpop_signing_alg_values_supported"]
    assert not {"none", "HS256"} & set(doc["dpop_signing_alg_values_supported"])


async def test_with_server_nonces_a_proof_must_carry_the_current_one(
    make_client: MakeClient,
) -> None:
    m = await machines(make_client, {"AUTHSVC_OAUTH__DPOP_NONCE": "true"})
    client = await m.register(m.admin)
    url = endpoint(m)
    key = ec.generate_private_key(ec.SECP256R1())
    resp = await dpop_token(m, client, [proof(key, url)])
    await oauth_error(resp, 400, "use_dpop_nonce")
    nonce = resp.headers["DPoP-Nonce"]
    resp = await dpop_token(m, client, [proof(key, url, claims={"nonce": "stale"})])
    await oauth_error(resp, 400, "use_dpop_nonce")
    assert resp.headers["DPoP-Nonce"] == nonce
    resp = await dpop_token(m, client, [proof(key, url, claims={"nonce": nonce})])
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["token_type"] == "DPoP" and resp.headers["DPoP-Nonce"] == nonce
    # A Bearer token needs no proof and so no nonce.
    assert (await m.granted(client))["token_type"] == "Bearer"


async def test_htu_is_the_issuers_url_never_one_built_from_the_request_host(
    make_client: MakeClient,
) -> None:
    m = await machines(make_client)
    client = await m.register(m.admin)
    key = ec.generate_private_key(ec.SECP256R1())
    # The URL the request reached (http://127.0.0.1:<port>/oauth/token) is not the issuer's.
    reached = str(m.http.make_url("/oauth/token"))
    assert reached != endpoint(m)
    await oauth_error(await dpop_token(m, client, [proof(key, reached)]), 400,
                      "invalid_dpop_proof")  # fmt: skip
    # Nor is a Host header the caller chose, with a proof made for it.
    forged = proof(key, "http://evil.example/oauth/token")
    await oauth_error(await dpop_token(m, client, [forged], host="evil.example"), 400,
                      "invalid_dpop_proof")  # fmt: skip
    resp = await dpop_token(m, client, [proof(key, endpoint(m))], host="evil.example")
    assert resp.status == 200, await resp.text()


async def test_equivalent_spellings_of_the_issuers_url_are_accepted(
    make_client: MakeClient,
) -> None:
    m = await machines(make_client, {"AUTHSVC_AUTH__ISSUER": "http://localhost"})
    client = await m.register(m.admin)
    key = ec.generate_private_key(ec.SECP256R1())
    for htu in ("HTTP://LOCALHOST:80/oauth/token", "http://Localhost/%6Fauth/token",
                "http://localhost:80/oauth/token?x=1#frag"):  # fmt: skip
        resp = await dpop_token(m, client, [proof(key, htu)])
        assert resp.status == 200, (htu, await resp.text())
    for htu in ("http://localhost:8080/oauth/token", "https://localhost/oauth/token",
                "http://localhost/OAUTH/token", "http://localhost/oauth%2Ftoken"):  # fmt: skip
        await oauth_error(await dpop_token(m, client, [proof(key, htu)]), 400,
                          "invalid_dpop_proof")  # fmt: skip
