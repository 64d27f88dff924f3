"""Bad ID tokens from a misbehaving provider (docs/reference/federation.md; UP-05, UP-06, UP-12): a
small fake OpenID provider (aiohttp, in the test) signs each token with PyJWT; every one is refused
(400 ``federation_failed``) with nothing created."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from domain.audit import AuditQuery
from tests.e2e.federation_helpers import (
    CLIENT_ID,
    callback,
    fake_idp,
    fake_provider_toml,
    start,
)
from tests.e2e.helpers import ONE_PER_BACKEND, MakeClient, container_of


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
async def fake(make_client: MakeClient, tmp_path: Path) -> Any:
    async with fake_idp() as idp:
        path = tmp_path / "authsvc.toml"
        path.write_text(fake_provider_toml(idp))
        client = await make_client(config_path=str(path))
        yield idp, client


async def _users(client: TestClient) -> list[Any]:
    async with container_of(client).storage().read() as uow:
        return await uow.users.list_page(None, None, 100)


async def _native(client: TestClient, token: str, nonce: str | None = "n-1") -> Any:
    body = {"provider": "test", "id_token": token}
    if nonce is not None:
        body["nonce"] = nonce
    return await client.post("/login/federated", json=body)


async def test_a_good_token_signs_in(fake: Any) -> None:
    """The fake provider's good token works (so the negatives below fail for their cause)."""
    idp, client = fake
    resp = await _native(client, idp.id_token("n-1"))
    assert resp.status == 200, await resp.text()
    assert "access_token" in await resp.json()


BAD = {  # (claims, header); "relative": the claims are seconds from when the test runs
    "wrong iss": ({"iss": "https://evil.example"}, {}),
    "wrong aud": ({"aud": "someone-else"}, {}),
    "several aud without azp": ({"aud": [CLIENT_ID, "other"]}, {}),
    "azp of another client": ({"azp": "other"}, {}),
    "expired": ({"exp": -600, "iat": -900}, {"relative": True}),
    "issued in the future": ({"iat": 600, "exp": 900}, {"relative": True}),
    "missing iat": ({"iat": None}, {}),
    "missing sub": ({"sub": None}, {}),
    "wrong nonce": ({"nonce": "other"}, {}),
    "alg none": ({}, {"alg": "none"}),
    "unknown kid": ({}, {"kid": "rogue", "sign": "rogue"}),
    "bad signature": ({}, {"kid": "k1", "sign": "k2"}),
    "kid absent with several keys": ({}, {"kid": None}),
}


@pytest.mark.parametrize("case", list(BAD))
async def test_up05_each_bad_id_token_is_refused_with_nothing_created(fake: Any, case: str) -> None:
    """UP-05: wrong iss, aud, azp, nonce, expired, future iat, missing iat or sub, alg none,
    unknown kid, bad signature, absent kid with several keys: 400, no user."""
    idp, client = fake
    claims, header = BAD[case][0], dict(BAD[case][1])  # a copy: "sign" is popped below
    if header.pop("relative", False):  # times from now, not from when the module was imported
        now = int(time.time())
        claims = {name: now + offset for name, offset in claims.items()}
    idp.claims_override = dict(claims)
    idp.sign_with = header.pop("sign", "k1") if "sign" in header else "k1"
    idp.header = {"kid": "k1", **{k: v for k, v in header.items()}}
    if header.get("alg") == "none":
        idp.header = {"alg": "none"}
    resp = await _native(client, idp.id_token("n-1"))
    assert resp.status == 400, (case, await resp.text())
    assert (await resp.json())["code"] == "federation_failed"
    assert await _users(client) == []


async def test_up05_kid_absent_with_a_single_key_is_accepted(fake: Any) -> None:
    """UP-05: kid absent and one key in the set → accepted."""
    idp, client = fake
    idp.published = ["k1"]
    idp.header = {"kid": None}
    assert (await _native(client, idp.id_token("n-1"))).status == 200


async def test_nonce_given_as_is(fake: Any) -> None:
    """/login/federated: a token with a nonce and none given, or the reverse, or neither → 400
    (docs/reference/federation.md: the nonce is required)."""
    idp, client = fake
    assert (await _native(client, idp.id_token("n-1"), nonce=None)).status == 400
    assert (await _native(client, idp.id_token(None), nonce="n-1")).status == 400
    resp = await _native(client, idp.id_token(None), nonce=None)
    assert resp.status == 400 and (await resp.json())["code"] == "federation_failed"
    assert await _users(client) == []


async def test_native_replay_and_stale_tokens_are_refused(fake: Any) -> None:
    """/login/federated (security review s5, finding 8): an (issuer, nonce) pair is accepted
    once until the token's exp — the same token again, or another token with that nonce, is
    refused; a token whose ``iat`` is over 300 s old is refused though it has not expired; a
    fresh token with a new nonce still works. The nonces are kept in the database (so every
    instance refuses the replay) and purged by housekeeping after the token's exp."""
    idp, client = fake
    token = idp.id_token("n-once")
    assert (await _native(client, token, nonce="n-once")).status == 200
    again = await _native(client, token, nonce="n-once")
    assert again.status == 400 and (await again.json())["code"] == "federation_failed"
    assert (await _native(client, idp.id_token("n-once"), nonce="n-once")).status == 400
    now = int(time.time())
    idp.claims_override = {"iat": now - 301, "exp": now + 600}
    stale = await _native(client, idp.id_token("n-stale"), nonce="n-stale")
    assert stale.status == 400 and (await stale.json())["code"] == "federation_failed"
    idp.claims_override = {}
    assert (await _native(client, idp.id_token("n-new"), nonce="n-new")).status == 200
    async with container_of(client).storage().read() as uow:
        page = await uow.audit.list_page(AuditQuery(type="login.failed"), None, 50)
    reasons = sorted(str(e.details.get("reason")) for e in page)
    assert reasons == ["id_token_stale", "nonce_replayed", "nonce_replayed"], reasons
    async with container_of(client).storage().begin() as uow:  # housekeeping's purge
        assert await uow.identities.purge_expired(datetime.now(UTC)) == 0
        assert await uow.identities.purge_expired(datetime.now(UTC) + timedelta(seconds=700)) == 2
        await uow.commit()


async def test_up12_an_unknown_kid_storm_fetches_the_key_set_rarely(fake: Any) -> None:
    """UP-12: unknown kids refetch the JWK Set at most once per interval."""
    idp, client = fake
    idp.header, idp.sign_with = {"kid": "rogue"}, "rogue"
    for _ in range(10):
        assert (await _native(client, idp.id_token("n-1"))).status == 400
    assert idp.jwks_fetches <= 2


async def test_up06_a_userinfo_sub_differing_is_refused(fake: Any) -> None:
    """UP-06: in the browser flow, userinfo's sub differing from the ID token's → refused."""
    idp, client = fake
    location = await start(client)
    from urllib.parse import parse_qs, urlsplit

    params = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    idp.nonce = params["nonce"]
    idp.userinfo_sub = "someone-else"
    resp = await callback(client, {"code": "c", "state": params["state"]})
    assert resp.status == 400
    assert await _users(client) == []
    # and the same flow with userinfo agreeing signs in (the refusal was the sub)
    location = await start(client)
    params = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    idp.nonce, idp.userinfo_sub = params["nonce"], None
    resp = await callback(client, {"code": "c", "state": params["state"]})
    assert resp.status == 303, await resp.text()


async def test_up04_a_discovery_issuer_mismatch_cannot_start(fake: Any) -> None:
    """UP-04: a discovery document naming another issuer → the provider cannot be used."""
    idp, client = fake
    real = idp.issuer
    idp.issuer = "https://other.example"
    container_of(client).upstream_client()._discovery.clear()
    resp = await client.get("/federation/test/start", allow_redirects=False)
    assert resp.status == 400
    idp.issuer = real
