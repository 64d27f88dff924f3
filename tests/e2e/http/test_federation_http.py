"""Login with another identity provider over HTTP (docs/reference/federation.md) against a real OIDC
provider: panva ``oidc-provider`` 9.13.3 started by the tests, its login driven over HTTP.
SQLite and PostgreSQL; UP-xx are the research file's checks (§6, work item B)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from aiohttp.test_utils import TestClient
from dependency_injector import providers

from domain.audit import AuditQuery
from tests.e2e.federation_helpers import (
    answer_link,
    callback,
    offer_of,
    provider_toml,
    start,
    start_link,
    upstream,  # noqa: F401 - fixture
    upstream_login,
)
from tests.e2e.helpers import ONE_PER_BACKEND, PASSWORD, MakeClient, bearer, container_of
from tests.e2e.oidc_helpers import ORIGIN, csrf_of, register_user, sign_in
from tests.fakes import FakeClock

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def fed_client(make_client: MakeClient, upstream: dict[str, str], tmp_path: Path) -> Any:  # noqa: F811
    async def make(**extra: Any) -> TestClient:
        path = tmp_path / "authsvc.toml"
        path.write_text(provider_toml(upstream, **extra))
        return await make_client(config_path=str(path))

    return make


async def _users(client: TestClient) -> list[Any]:
    async with container_of(client).storage().read() as uow:
        return await uow.users.list_page(None, None, 100)


async def _identities(client: TestClient, user_id: str) -> list[Any]:
    async with container_of(client).storage().read() as uow:
        return await uow.identities.list_for_user(user_id)


async def _audit_types(client: TestClient) -> list[str]:
    async with container_of(client).storage().read() as uow:
        page = await uow.audit.list_page(AuditQuery(), None, 200)
    return [e.type for e in page]


async def _login(client: TestClient, login: str, return_to: str = "/ui/signed-in") -> Any:
    location = await start(client, return_to)
    query = await upstream_login(location, login)
    return await callback(client, query)


async def test_up01_happy_path_creates_a_user_and_signs_in(
    fed_client: Any,
    upstream: dict[str, str],  # noqa: F811
) -> None:
    """UP-01: the redirect carries S256, state and nonce; the upstream login makes a new user
    and an identity (iss, sub); a hosted session; the audit rows. The provider has no
    ``trust_email``, so the new user's email is not verified, though the provider says it is
    (docs/reference/federation.md: pre-hijacked accounts)."""
    client = await fed_client()
    page = await client.get("/ui/login")
    assert "Continue with TestIdP" in await page.text()
    location = await start(client, "/ui/account")
    params = parse_qs(urlsplit(location).query)
    assert params["code_challenge_method"] == ["S256"]
    assert params["state"] and params["nonce"] and params["code_challenge"]
    query = await upstream_login(location, "dave@example.com")
    assert query["iss"] == upstream["issuer"]
    resp = await callback(client, query)
    assert resp.status == 303, await resp.text()
    assert resp.headers["Location"] == "/ui/account"
    (user,) = await _users(client)
    assert (user.email, user.email_verified, user.password_hash) == ("dave@example.com", False, "")
    (identity,) = await _identities(client, user.id)
    assert (identity.issuer, identity.subject, identity.provider) == (
        upstream["issuer"], "dave@example.com", "test")  # fmt: skip
    account = await client.get("/ui/account", allow_redirects=False)
    assert account.status == 200 and "dave@example.com" in await account.text()


async def test_up02_the_same_sub_is_the_same_user(fed_client: Any) -> None:
    """UP-02: a second login with the same upstream sub is the same user."""
    client = await fed_client()
    assert (await _login(client, "erin@example.com")).status == 303
    client.session.cookie_jar.clear()
    assert (await _login(client, "erin@example.com")).status == 303
    (user,) = await _users(client)
    (identity,) = await _identities(client, user.id)
    assert identity.last_used_at is not None


async def test_up03_state_checks_create_nothing(fed_client: Any) -> None:
    """UP-03: a missing, wrong, replayed or other-browser state is refused, creating nothing.
    The state is taken only when the browser cookie matches (docs/reference/federation.md): another
    browser presenting it (someone who saw it in a log or a Referer) does not void the login,
    which the right browser then completes — once."""
    client = await fed_client()
    location = await start(client)
    query = await upstream_login(location, "frank@example.com")
    for bad in ({**query, "state": ""}, {**query, "state": "wrong"}):
        resp = await callback(client, bad)
        assert resp.status == 400 and "did not work" in await resp.text()
    cookies = list(client.session.cookie_jar)
    client.session.cookie_jar.clear()  # another browser: no federation cookie
    assert (await callback(client, query)).status == 400
    client.session.cookie_jar.update_cookies({"authsvc_federation": "x" * 43})  # another one
    assert (await callback(client, query)).status == 400
    assert await _users(client) == []
    client.session.cookie_jar.clear()
    client.session.cookie_jar.update_cookies({c.key: c.value for c in cookies})
    assert (await callback(client, query)).status == 303  # the state was left in place
    assert (await callback(client, query)).status == 400  # replayed: taken already
    assert [u.email for u in await _users(client)] == ["frank@example.com"]


async def test_up03_an_expired_state_is_refused(fed_client: Any) -> None:
    """UP-03: a state older than ``federation.state_ttl`` (default 600 s) is refused, and
    creates nothing; the same callback 590 s after its start still works (the clock of the
    app is moved, not waited for)."""
    client = await fed_client()
    clock = FakeClock(datetime.now(UTC).replace(microsecond=0))
    container_of(client).clock.override(providers.Object(clock))
    try:
        in_time = await upstream_login(await start(client), "quinn@example.com")
        clock.advance(590)
        assert (await callback(client, in_time)).status == 303
        late = await upstream_login(await start(client), "rosa@example.com")
        clock.advance(601)
        resp = await callback(client, late)
        assert resp.status == 400 and "did not work" in await resp.text()
        assert [u.email for u in await _users(client)] == ["quinn@example.com"]
        async with container_of(client).storage().read() as uow:
            page = await uow.audit.list_page(AuditQuery(), None, 200)
        failed = [e for e in page if e.type == "login.failed"]
        assert [e.details.get("reason") for e in failed] == ["state_expired"], failed
    finally:
        container_of(client).clock.reset_override()


async def test_up04_a_different_iss_is_refused(fed_client: Any) -> None:
    """UP-04: the callback's iss differs from the configured issuer → refused."""
    client = await fed_client()
    query = await upstream_login(await start(client), "gina@example.com")
    resp = await callback(client, {**query, "iss": "http://127.0.0.1:1"})
    assert resp.status == 400
    assert await _users(client) == []


async def test_up07_a_tampered_verifier_fails_cleanly(fed_client: Any) -> None:
    """UP-07: PKCE is required upstream; a code redeemed with another verifier fails (here the
    code of one started login with the state of another: its verifier does not match)."""
    client = await fed_client()
    first = await upstream_login(await start(client), "hank@example.com")
    second = await upstream_login(await start(client), "hank@example.com")
    resp = await callback(client, {**second, "code": first["code"]})
    assert resp.status == 400
    assert await _users(client) == []


async def test_up08_cancel_at_the_provider_shows_the_login_page(fed_client: Any) -> None:
    """UP-08: access_denied (the user pressed Cancel) → the login page with a message."""
    client = await fed_client()
    query = await upstream_login(await start(client), "", abort=True)
    assert query["error"] == "access_denied"
    resp = await callback(client, query)
    assert resp.status == 400
    text = await resp.text()
    assert "did not work" in text and 'action="/ui/login"' in text
    assert await _users(client) == []


async def test_up09a_no_link_without_trust_email(fed_client: Any) -> None:
    """UP-09 (a): a local verified account + a verified upstream email, trust_email off → not
    linked; the page says to sign in and link."""
    client = await fed_client()
    user_id = await _verified_user(client, "ivy@example.com")
    resp = await _login(client, "ivy@example.com")
    assert resp.status == 409 and "then link" in await resp.text()
    assert await _identities(client, user_id) == []


async def test_up09b_trust_email_links(fed_client: Any) -> None:
    """UP-09 (b): with trust_email the verified account is linked, and audited."""
    client = await fed_client(trust_email=True)
    user_id = await _verified_user(client, "jack@example.com")
    assert (await _login(client, "jack@example.com")).status == 303
    assert [i.provider for i in await _identities(client, user_id)] == ["test"]
    types = await _audit_types(client)
    assert "identity.linked" in types and "login.succeeded" in types


@pytest.mark.parametrize("flag", ["unverified", "absent"])
async def test_up09cd_an_unverified_email_never_links(fed_client: Any, flag: str) -> None:
    """UP-09 (c), (d): email_verified false or absent → never linked, even with trust_email;
    a new account is not marked verified."""
    client = await fed_client(trust_email=True)
    user_id = await _verified_user(client, "kim@example.com")
    assert (await _login(client, f"kim@example.com:{flag}")).status == 409
    assert await _identities(client, user_id) == []
    assert (await _login(client, f"new@example.com:{flag}")).status == 303
    new = [u for u in await _users(client) if u.email == "new@example.com"]
    assert len(new) == 1 and not new[0].email_verified


async def test_up09e_a_pre_hijacked_unverified_account_is_not_linked(fed_client: Any) -> None:
    """UP-09 (e): an attacker's unverified local account with the victim's email is not
    linked into, even with trust_email and a verified upstream email."""
    client = await fed_client(trust_email=True)
    attacker = await register_user(client, "lee@example.com")
    assert (await _login(client, "lee@example.com")).status == 409
    assert await _identities(client, attacker) == []


async def test_mfa_user_still_passes_the_second_step(fed_client: Any) -> None:
    """A federated login is one factor: a user with MFA on is sent to the second step."""
    client = await fed_client(trust_email=True)
    user_id = await _verified_user(client, "mo@example.com")
    async with container_of(client).storage().begin() as uow:
        user = await uow.users.get(user_id)
        import attrs

        await uow.users.update(attrs.evolve(user, mfa_enabled=True))
        await uow.commit()
    resp = await _login(client, "mo@example.com", "/ui/account")
    assert resp.status == 303
    assert resp.headers["Location"].startswith("/ui/login/mfa?")
    assert "authsvc_session" not in {c.key for c in client.session.cookie_jar}


async def test_up10_link_and_unlink_from_the_account(fed_client: Any) -> None:
    """UP-10: link from the account page after a fresh login — a POST of the page, then a
    confirmation naming the provider and the upstream email, and only "Link" writes it;
    /me/identities lists it; unlink works, but not the last login method; one (iss, sub)
    cannot go to two users."""
    client = await fed_client()
    user_id = await _verified_user(client, "nia@example.com")
    await sign_in(client, "/ui/account", "nia@example.com")
    location = (await start_link(client)).headers["Location"]
    query = await upstream_login(location, "nia-upstream@example.com")
    resp = await callback(client, query)
    page_text = await resp.text()
    assert resp.status == 200 and "Link TestIdP to your account?" in page_text
    assert "nia-upstream@example.com" in page_text
    assert await _identities(client, user_id) == []  # nothing before the confirmation
    resp = await answer_link(client, offer_of(page_text))
    assert resp.status == 303 and resp.headers["Location"] == "/ui/account"
    assert [i.provider for i in await _identities(client, user_id)] == ["test"]
    page_text = await (await client.get("/ui/account")).text()
    assert "Unlink TestIdP" in page_text and "nia-upstream@example.com" in page_text
    assert "Linked</dt>" in page_text and "Never" in page_text  # not used to sign in yet
    token = await _token(client, "nia@example.com")
    listed = await (await client.get("/me/identities", headers=bearer(token))).json()
    assert [i["provider"] for i in listed["items"]] == ["test"]
    # another user cannot link the same upstream identity
    client.session.cookie_jar.clear()
    await _verified_user(client, "oz@example.com")
    await sign_in(client, "/ui/account", "oz@example.com")
    query = await upstream_login((await start_link(client)).headers["Location"],
                                 "nia-upstream@example.com")  # fmt: skip
    resp = await callback(client, query)
    assert (await answer_link(client, offer_of(await resp.text()))).status == 409
    # unlink: the password is left, so it works
    resp = await client.delete("/me/identities/test", headers=bearer(token))
    assert resp.status == 204
    assert await _identities(client, user_id) == []
    assert "identity.unlinked" in await _audit_types(client)


async def test_up10_the_last_login_method_stays(fed_client: Any) -> None:
    """UP-10: a federated-only user cannot unlink its one identity (409 last_login_method)."""
    client = await fed_client()
    assert (await _login(client, "pat@example.com", "/ui/account")).status == 303
    page = await client.get("/ui/account")
    assert "Unlink TestIdP" in await page.text()
    form = {"provider": "test", "csrf_token": csrf_of(client)}
    resp = await client.post("/ui/account/unlink", data=form, headers=ORIGIN,
                             allow_redirects=False)  # fmt: skip
    assert resp.status == 409 and resp.content_type == "text/html"
    assert "This is the last way to sign in to your account" in await resp.text()
    (user,) = await _users(client)
    assert len(await _identities(client, user.id)) == 1


async def test_up12_a_disabled_provider_answers_404(fed_client: Any) -> None:
    """UP-12: a disabled provider's start and callback are refused (404)."""
    client = await fed_client(enabled=False)
    assert (await client.get("/federation/test/start", allow_redirects=False)).status == 404
    assert (await client.get("/federation/test/callback?state=x&code=y")).status == 404
    assert (await client.get("/federation/nope/start", allow_redirects=False)).status == 404
    assert "Continue with" not in await (await client.get("/ui/login")).text()


async def _verified_user(client: TestClient, email: str) -> str:
    user_id = await register_user(client, email)
    async with container_of(client).storage().begin() as uow:
        user = await uow.users.get(user_id)
        import attrs

        await uow.users.update(attrs.evolve(user, email_verified=True))
        await uow.commit()
    return user_id


async def _token(client: TestClient, email: str) -> str:
    resp = await client.post("/login", json={"email": email, "password": PASSWORD})
    return str((await resp.json())["access_token"])
