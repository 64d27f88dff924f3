"""A GitHub provider (docs/reference/federation.md: "GitHub: ``/user`` and ``/user/emails``,
verified entries only"; research §6 UP-09 (f)) against a fake GitHub in the test (aiohttp): its
OAuth token endpoint, ``/user`` and ``/user/emails``. SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from tests.e2e.federation_helpers import provider_toml
from tests.e2e.helpers import ONE_PER_BACKEND, MakeClient, container_of
from tests.e2e.oidc_helpers import register_user

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

SECRET = "gh-secret"


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


class FakeGitHub:
    """``POST /login/oauth/access_token`` (the code ``good`` with our secret → a token),
    ``GET /user`` (id 4242) and ``GET /user/emails`` (``self.emails``), the two API calls
    only with that token."""

    def __init__(self) -> None:
        self.emails: list[dict[str, Any]] = []
        self.exchanges = 0

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/login/oauth/access_token", self.token)
        app.router.add_get("/user", self.user)
        app.router.add_get("/user/emails", self.user_emails)
        return app

    async def token(self, request: web.Request) -> web.Response:
        form = await request.post()
        self.exchanges += 1
        if form.get("code") != "good" or form.get("client_secret") != SECRET:
            return web.json_response({"error": "bad_verification_code"})
        assert form.get("code_verifier")  # PKCE sent
        return web.json_response({"access_token": "gho_test", "token_type": "bearer"})

    @staticmethod
    def _authorized(request: web.Request) -> None:
        if request.headers.get("Authorization") != "Bearer gho_test":
            raise web.HTTPUnauthorized()

    async def user(self, request: web.Request) -> web.Response:
        self._authorized(request)
        return web.json_response({"id": 4242, "login": "octo", "name": "Octo Cat"})

    async def user_emails(self, request: web.Request) -> web.Response:
        self._authorized(request)
        return web.json_response(self.emails)


@pytest.fixture
async def github() -> Any:
    fake = FakeGitHub()
    server = TestServer(fake.app(), host="127.0.0.1")
    await server.start_server()
    base = str(server.make_url("")).rstrip("/")
    yield fake, base
    await server.close()


async def _client(make_client: MakeClient, tmp_path: Path, base: str) -> TestClient:
    table = provider_toml(
        {"issuer": "", "client_id": "Iv1.test", "client_secret": SECRET},
        id="gh", name="GitHub", kind="github", github_url=base, github_api_url=base,
        trust_email=True,
    )  # fmt: skip
    config = tmp_path / "authsvc.toml"
    config.write_text(table.replace('issuer = ""\n', ""))
    return await make_client(config_path=str(config))


async def _sign_in_with_github(client: TestClient, base: str) -> Any:
    """Start (303 to the fake's authorize URL), then the callback with the code ``good``."""
    start = await client.get("/federation/gh/start", allow_redirects=False)
    assert start.status == 303, await start.text()
    location = start.headers["Location"]
    assert location.startswith(f"{base}/login/oauth/authorize?")
    params = parse_qs(urlsplit(location).query)
    assert params["code_challenge_method"] == ["S256"]
    query = {"code": "good", "state": params["state"][0]}
    return await client.get("/federation/gh/callback", params=query, allow_redirects=False)


async def _users(client: TestClient) -> dict[str, Any]:
    async with container_of(client).storage().read() as uow:
        return {u.email: u for u in await uow.users.list_page(None, None, 100)}


async def _identities(client: TestClient, user_id: str) -> list[Any]:
    async with container_of(client).storage().read() as uow:
        return await uow.identities.list_for_user(user_id)


async def _verified(client: TestClient, email: str) -> str:
    import attrs

    user_id = await register_user(client, email)
    async with container_of(client).storage().begin() as uow:
        user = await uow.users.get(user_id)
        await uow.users.update(attrs.evolve(user, email_verified=True))
        await uow.commit()
    return user_id


async def test_up09f_only_a_verified_github_email_is_used(
    make_client: MakeClient, tmp_path: Path, github: tuple[FakeGitHub, str]
) -> None:
    """UP-09 (f): /user/emails lists the victim's address as the *primary* but unverified, and
    another verified one. Even with ``trust_email`` and a verified local account of the
    victim, the unverified address is ignored: the victim is not linked; a new user is made
    with the verified address (marked verified), its identity keyed by GitHub's user id."""
    fake, base = github
    fake.emails = [
        {"email": "victim@example.com", "primary": True, "verified": False},
        {"email": "octo@example.com", "primary": False, "verified": True},
    ]
    client = await _client(make_client, tmp_path, base)
    victim = await _verified(client, "victim@example.com")
    resp = await _sign_in_with_github(client, base)
    assert resp.status == 303, await resp.text()
    assert await _identities(client, victim) == []
    users = await _users(client)
    octo = users["octo@example.com"]
    assert octo.email_verified is True and octo.password_hash == ""
    (identity,) = await _identities(client, octo.id)
    assert (identity.issuer, identity.subject, identity.provider, identity.email) == (
        base, "4242", "gh", "octo@example.com")  # fmt: skip


async def test_up09f_no_verified_github_email_links_and_creates_nothing(
    make_client: MakeClient, tmp_path: Path, github: tuple[FakeGitHub, str]
) -> None:
    """UP-09 (f): only unverified addresses at GitHub → none is used: the victim's verified
    local account (``trust_email`` on) is not linked and no user is created (403, the login
    page with a message)."""
    fake, base = github
    fake.emails = [
        {"email": "victim@example.com", "primary": True, "verified": False},
        {"email": "victim+2@example.com", "primary": False},
    ]
    client = await _client(make_client, tmp_path, base)
    victim = await _verified(client, "victim@example.com")
    resp = await _sign_in_with_github(client, base)
    assert resp.status == 403 and "cannot be used to create an account" in await resp.text()
    assert fake.exchanges == 1
    assert await _identities(client, victim) == []
    assert set(await _users(client)) == {"victim@example.com"}
