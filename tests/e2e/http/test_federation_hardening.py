"""Federation hardening over HTTP (docs/reference/mfa-and-passkeys.md and
docs/reference/federation.md; security review s5, findings 2, 7, 8, 10, 11 and 12): two fake OpenID
providers (``tests.e2e.federation_helpers.FakeIdp``) — ``untrusted`` (no ``trust_email``: it lets
anyone claim any address) and ``trusted`` (``trust_email``) — in front of the real app, on SQLite
and PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyotp
import pytest
from aiohttp.test_utils import TestClient

from application.shared.steps import new_opaque_token
from domain.audit import AuditQuery
from domain.model import EmailToken, EmailTokenPurpose
from tests.e2e.federation_helpers import FakeIdp, fake_idp, fake_provider_toml
from tests.e2e.helpers import (
    ONE_PER_BACKEND,
    PASSWORD,
    MakeClient,
    assert_problem,
    bearer,
    container_of,
)
from tests.e2e.oidc_helpers import (
    ORIGIN,
    auth_params,
    authorize,
    csrf_of,
    exchange,
    pkce,
    query_of,
    register_client,
    register_user,
    sign_in,
    verify_id_token,
)

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

VICTIM = "victim@corp.example"
NEW_PASSWORD = "a brand new passphrase"


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


@dataclass
class Idps:
    """The app and its two providers."""

    client: TestClient
    untrusted: FakeIdp
    trusted: FakeIdp


@pytest.fixture
async def idps(make_client: MakeClient, tmp_path: Path) -> AsyncIterator[Idps]:
    async with fake_idp() as untrusted, fake_idp() as trusted:
        path = tmp_path / "authsvc.toml"
        path.write_text(fake_provider_toml(untrusted, "untrusted")
                        + fake_provider_toml(trusted, "trusted", trust_email=True))  # fmt: skip
        yield Idps(await make_client(config_path=str(path)), untrusted, trusted)


def _token(idp: FakeIdp, sub: str, email: str, nonce: str, **claims: Any) -> str:
    idp.claims_override = {"sub": sub, "email": email, "email_verified": True, **claims}
    return idp.id_token(nonce)


async def _native(client: TestClient, provider: str, idp: FakeIdp, sub: str,
                  email: str = VICTIM) -> Any:  # fmt: skip
    """POST /login/federated with a fresh token of ``idp`` for ``sub`` claiming ``email``."""
    nonce = f"n-{time.monotonic_ns()}"
    body = {"provider": provider, "id_token": _token(idp, sub, email, nonce), "nonce": nonce}
    return await client.post("/login/federated", json=body)


async def _user(client: TestClient, email: str = VICTIM) -> Any:
    async with container_of(client).storage().read() as uow:
        return await uow.users.get_by_email(email)


async def _identities(client: TestClient, user_id: str) -> list[str]:
    async with container_of(client).storage().read() as uow:
        return [i.provider for i in await uow.identities.list_for_user(user_id)]


async def _mailed_token(client: TestClient, user_id: str, purpose: EmailTokenPurpose) -> str:
    """The token a mail to the owner's inbox carries (planted as the use case stores it)."""
    clear, digest = new_opaque_token()
    now = datetime.now(UTC)
    async with container_of(client).storage().begin() as uow:
        await uow.email_tokens.add(EmailToken(digest, user_id, purpose,
                                              now + timedelta(minutes=30), now))  # fmt: skip
        await uow.commit()
    return clear


@pytest.mark.parametrize("proof", ["reset", "verification"])
async def test_a_pre_hijacked_account_is_taken_back_when_the_owner_proves_the_email(
    idps: Idps, proof: str
) -> None:
    """Finding 2 (Sudhodanan & Paverd 2022): the attacker signs in through the untrusted
    provider claiming the victim's address → a new account whose email is NOT verified; the
    owner's trusted provider is therefore not auto-linked into it (409). The owner proves the
    email (a password reset, or the verification link): the attacker's identity is removed
    (``identity.unlinked``, reason ``email_proven``) and its session ends; the attacker's next
    login through the untrusted provider does not land in the owner's account; the owner's
    trusted provider now links and signs in."""
    client = idps.client
    resp = await _native(client, "untrusted", idps.untrusted, "attacker")
    assert resp.status == 200, await resp.text()
    attacker = await resp.json()
    user = await _user(client)
    assert user.email_verified is False
    assert await _identities(client, user.id) == ["untrusted"]
    await assert_problem(await _native(client, "trusted", idps.trusted, "owner"), 409,
                         "account_exists")  # fmt: skip
    if proof == "reset":
        token = await _mailed_token(client, user.id, EmailTokenPurpose.RESET)
        resp = await client.post("/password/reset",
                                 json={"token": token, "new_password": NEW_PASSWORD})  # fmt: skip
    else:  # the attacker asks for the mail (its own bearer); it reaches the owner's inbox
        resp = await client.post("/me/email/verify", headers=bearer(attacker["access_token"]))
        assert resp.status == 202
        token = await _mailed_token(client, user.id, EmailTokenPurpose.VERIFY)
        resp = await client.post("/email/verify", json={"token": token})
    assert resp.status == 204, await resp.text()
    assert await _identities(client, user.id) == []
    assert (await _user(client)).email_verified is True
    await assert_problem(await client.post(
        "/refresh", json={"refresh_token": attacker["refresh_token"]}), 401,
        "invalid_refresh_token")  # fmt: skip
    async with container_of(client).storage().read() as uow:
        unlinked = await uow.audit.list_page(AuditQuery(type="identity.unlinked"), None, 10)
    assert [(e.user_id, dict(e.details)) for e in unlinked] == [
        (user.id, {"provider": "untrusted", "reason": "email_proven"})
    ]
    # The attacker again: its identity is gone, and an untrusted email links nothing.
    await assert_problem(await _native(client, "untrusted", idps.untrusted, "attacker"), 409,
                         "account_exists")  # fmt: skip
    assert await _identities(client, user.id) == []
    # The owner's trusted provider now links (verified on both sides) and signs in.
    resp = await _native(client, "trusted", idps.trusted, "owner")
    assert resp.status == 200, await resp.text()
    assert await _identities(client, user.id) == ["trusted"]


async def test_only_a_trusted_provider_creates_verified_users(idps: Idps) -> None:
    """Finding 2: a user created through a provider without ``trust_email`` starts with
    ``email_verified = false`` whatever the provider says; with ``trust_email`` the provider's
    ``email_verified`` is kept. An identity linked while the email was verified survives the
    owner's proof."""
    client = idps.client
    assert (
        await _native(client, "untrusted", idps.untrusted, "u1", "un@corp.example")
    ).status == 200
    assert (await _native(client, "trusted", idps.trusted, "t1", "tr@corp.example")).status == 200
    assert (await _user(client, "un@corp.example")).email_verified is False
    trusted_user = await _user(client, "tr@corp.example")
    assert trusted_user.email_verified is True
    token = await _mailed_token(client, trusted_user.id, EmailTokenPurpose.RESET)
    resp = await client.post("/password/reset", json={"token": token, "new_password": NEW_PASSWORD})
    assert resp.status == 204
    assert await _identities(client, trusted_user.id) == ["trusted"]


async def test_start_draws_from_the_anonymous_write_bucket(
    make_client: MakeClient, tmp_path: Path
) -> None:
    """Finding 10: ``GET /federation/{p}/start`` writes a state row for anyone, so it is
    limited like every anonymous write (``server.anonymous_write_burst``): past it 429 with
    ``Retry-After`` and no row."""
    async with fake_idp() as idp:
        path = tmp_path / "authsvc.toml"
        path.write_text(fake_provider_toml(idp))
        limit = {"AUTHSVC_SERVER__ANONYMOUS_WRITE_RATE": "0.01",
                 "AUTHSVC_SERVER__ANONYMOUS_WRITE_BURST": "3"}  # fmt: skip
        client = await make_client(limit, config_path=str(path))
        statuses = []
        for _ in range(5):
            resp = await client.get("/federation/test/start", allow_redirects=False)
            statuses.append(resp.status)
        assert statuses == [303, 303, 303, 429, 429]
        assert int(resp.headers["Retry-After"]) >= 1


@pytest.mark.parametrize("endpoint", ["token_endpoint", "jwks_uri", "userinfo_endpoint"])
async def test_a_provider_with_a_clear_text_endpoint_cannot_be_used(
    make_client: MakeClient, tmp_path: Path, endpoint: str
) -> None:
    """Finding 11 (discovery endpoints): a non-loopback ``http://`` token, JWKS or userinfo
    endpoint in the discovery document (the client secret, code, access token or keys in
    clear) → the provider's start is refused (400, the login page), no state stored."""
    async with fake_idp() as idp:
        idp.discovery_extra = {endpoint: "http://idp.example.com/" + endpoint}
        path = tmp_path / "authsvc.toml"
        path.write_text(fake_provider_toml(idp))
        client = await make_client(config_path=str(path))
        resp = await client.get("/federation/test/start", allow_redirects=False)
        assert resp.status == 400 and "did not work" in await resp.text()
        idp.discovery_extra = {}  # the same provider with its loopback http endpoints works
        container_of(client).upstream_client()._discovery.clear()
        assert (await client.get("/federation/test/start", allow_redirects=False)).status == 303


async def test_a_cross_site_get_cannot_start_a_link(idps: Idps) -> None:
    """Finding 7: the old link URL (``GET /federation/{p}/start?link=1``), navigated to by
    another site in a browser with a fresh hosted login, starts nothing: 303 to /ui/account,
    no state stored, no redirect to the provider."""
    client = idps.client
    await register_user(client, "alice@example.com")
    await sign_in(client, "/ui/account", "alice@example.com")
    resp = await client.get("/federation/trusted/start?link=1&return_to=%2Fui%2Faccount",
                            allow_redirects=False)  # fmt: skip
    assert resp.status == 303 and resp.headers["Location"] == "/ui/account"
    async with container_of(client).storage().begin() as uow:  # rolled back: a count
        assert await uow.identities.purge_expired(datetime.now(UTC) + timedelta(days=1)) == 0
    form = {"provider": "trusted", "csrf_token": "forged"}  # a cross-site POST: refused
    resp = await client.post("/ui/account/link", data=form, allow_redirects=False,
                             headers={"Origin": "https://evil.example"})  # fmt: skip
    assert resp.status == 403


async def test_a_federated_only_user_adds_totp_and_a_passkey_with_an_id_token(
    idps: Idps,
) -> None:
    """Finding 12 (docs/reference/mfa-and-passkeys.md): a user with no password and no passkey
    proves itself with a fresh ID token of its linked provider (``provider`` + ``id_token`` +
    ``nonce``) to turn TOTP on and to start a passkey registration. A token of another subject, a
    stale one (``iat`` over 300 s), a replayed nonce or an unlinked provider → 401
    ``reauthentication_required``."""
    client = idps.client
    resp = await _native(client, "trusted", idps.trusted, "fed-only", "fed@corp.example")
    access = (await resp.json())["access_token"]

    def proof(idp: FakeIdp, provider: str, sub: str, nonce: str, **claims: Any) -> dict[str, str]:
        token = _token(idp, sub, "fed@corp.example", nonce, **claims)
        return {"provider": provider, "id_token": token, "nonce": nonce}

    stale_iat = int(time.time()) - 301
    for bad in (proof(idps.trusted, "trusted", "someone-else", "r-1"),
                proof(idps.trusted, "trusted", "fed-only", "r-2", iat=stale_iat),
                proof(idps.untrusted, "untrusted", "fed-only", "r-3")):  # fmt: skip
        await assert_problem(await client.post("/me/mfa/totp", json=bad, headers=bearer(access)),
                             401, "reauthentication_required")  # fmt: skip
    good = proof(idps.trusted, "trusted", "fed-only", "r-4")
    resp = await client.post("/me/mfa/totp", json=good, headers=bearer(access))
    assert resp.status == 200, await resp.text()
    assert {"secret", "otpauth_uri"} <= set(await resp.json())
    await assert_problem(await client.post("/me/mfa/totp", json=good, headers=bearer(access)),
                         401, "reauthentication_required")  # fmt: skip  # the nonce is spent
    resp = await client.post("/me/passkeys/registration/options", headers=bearer(access),
                             json=proof(idps.trusted, "trusted", "fed-only", "r-5"))  # fmt: skip
    assert resp.status == 200, await resp.text()
    assert "ceremony_id" in await resp.json()
    mixed = {**proof(idps.trusted, "trusted", "fed-only", "r-6"), "password": PASSWORD}
    await assert_problem(await client.post("/me/mfa/totp", json=mixed, headers=bearer(access)),
                         422, "validation_error")  # fmt: skip


async def test_the_native_nonce_is_single_use_across_requests_for_the_issuer(idps: Idps) -> None:
    """Finding 8: the same nonce at another issuer is another pair (accepted); at the same
    issuer it is refused though the token (another ``sub``) differs."""
    client = idps.client
    nonce = "shared-nonce"
    body = {"provider": "untrusted", "nonce": nonce,
            "id_token": _token(idps.untrusted, "a", "a@corp.example", nonce)}  # fmt: skip
    assert (await client.post("/login/federated", json=body)).status == 200
    body = {"provider": "trusted", "nonce": nonce,
            "id_token": _token(idps.trusted, "b", "b@corp.example", nonce)}  # fmt: skip
    assert (await client.post("/login/federated", json=body)).status == 200
    body = {"provider": "untrusted", "nonce": nonce,
            "id_token": _token(idps.untrusted, "c", "c@corp.example", nonce)}  # fmt: skip
    await assert_problem(await client.post("/login/federated", json=body), 400,
                         "federation_failed")  # fmt: skip
    assert await _user(client, "c@corp.example") is None


async def test_a_federated_login_with_totp_says_fed_otp_mfa(idps: Idps) -> None:
    """Finding 11 (``amr``): a federated first step completed by a TOTP code on the hosted
    pages gives an ID token with ``amr`` ["fed", "otp", "mfa"] and ``acr`` "2" — not a
    password that was never used (docs/reference/federation.md). The user is federated-only and
    turned TOTP on with an ID-token proof (finding 12)."""
    client, idp = idps.client, idps.trusted
    resp = await _native(client, "trusted", idp, "mfa-user", "mfa@corp.example")
    access = (await resp.json())["access_token"]
    nonce = "enrol-nonce"
    enrol = {"provider": "trusted", "nonce": nonce,
             "id_token": _token(idp, "mfa-user", "mfa@corp.example", nonce)}  # fmt: skip
    resp = await client.post("/me/mfa/totp", json=enrol, headers=bearer(access))
    secret = (await resp.json())["secret"]
    code = pyotp.TOTP(secret).now()
    resp = await client.post("/me/mfa/totp/confirm", json={"code": code}, headers=bearer(access))
    assert resp.status == 200, await resp.text()
    app = await register_client(client, skip_consent=True)
    verifier, challenge = pkce()
    resp = await authorize(client, auth_params(app, challenge))
    return_to = query_of(resp.headers["Location"])["return_to"]
    resp = await client.get("/federation/trusted/start", params={"return_to": return_to},
                            allow_redirects=False)  # fmt: skip
    upstream = query_of(resp.headers["Location"])
    idp.nonce = upstream["nonce"]
    idp.claims_override = {"sub": "mfa-user", "email": "mfa@corp.example", "email_verified": True}
    resp = await client.get("/federation/trusted/callback", allow_redirects=False,
                            params={"code": "c", "state": upstream["state"]})  # fmt: skip
    mfa_location = resp.headers["Location"]
    assert resp.status == 303 and mfa_location.startswith("/ui/login/mfa?"), await resp.text()
    await client.get(mfa_location)
    later = pyotp.TOTP(secret).at(time.time() + 30)  # not the enrolment's step
    form = {"code": later, "csrf_token": csrf_of(client), "return_to": return_to}
    resp = await client.post("/ui/login/mfa", data=form, headers=ORIGIN, allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"] == return_to, await resp.text()
    resp = await client.get(return_to, allow_redirects=False)
    callback = query_of(resp.headers["Location"])
    tokens = await (await exchange(client, app, callback["code"], verifier)).json()
    claims = await verify_id_token(client, tokens["id_token"], app.id)
    assert claims["amr"] == ["fed", "otp", "mfa"] and claims["acr"] == "2"
