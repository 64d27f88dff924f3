"""A federated login that finds an existing account (docs/reference/federation.md,
``account_exists``; docs/guides/self-service.md), through the browser's callback against a real
OIDC provider (panva ``oidc-provider``, ``tests.e2e.federation_helpers``), on SQLite and
PostgreSQL: the login page says the account exists with its email filled in, and signing in with
the password goes on to where the federated attempt was heading — here an app's authorization
request, which ends at the app with a code."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import attrs
import pytest
from aiohttp.test_utils import TestClient

from tests.e2e.federation_helpers import (
    callback,
    provider_toml,
    start,
    upstream,  # noqa: F401 - fixture
    upstream_login,
)
from tests.e2e.helpers import ONE_PER_BACKEND, PASSWORD, MakeClient, container_of
from tests.e2e.oidc_helpers import (
    ORIGIN,
    REDIRECT,
    auth_params,
    authorize,
    csrf_of,
    pkce,
    query_of,
    register_client,
    register_user,
)

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

EMAIL = "ivy@example.com"
_HIDDEN = re.compile(r'name="return_to" value="([^"]*)"')


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


async def _client(make_client: MakeClient, up: dict[str, str], tmp_path: Path) -> TestClient:
    path = tmp_path / "authsvc.toml"
    path.write_text(provider_toml(up))
    return await make_client(config_path=str(path))


async def _verified_user(client: TestClient, email: str) -> str:
    user_id = await register_user(client, email)
    async with container_of(client).storage().begin() as uow:
        user = await uow.users.get(user_id)
        assert user is not None
        await uow.users.update(attrs.evolve(user, email_verified=True))
        await uow.commit()
    return user_id


async def test_account_exists_fills_the_email_and_resumes_the_first_attempt(
    make_client: MakeClient,
    upstream: dict[str, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    """An app's authorization request → the login page → "Continue with TestIdP" → the provider
    answers with the email of a local account it may not link (no ``trust_email``): 409, the
    login page saying so, the email filled in and ``return_to`` still the request; the password
    there → 303 to the request → the app gets its code. No identity was linked."""
    client = await _client(make_client, upstream, tmp_path)
    user_id = await _verified_user(client, EMAIL)
    app = await register_client(client, skip_consent=True)
    _, challenge = pkce()
    resp = await authorize(client, auth_params(app, challenge))
    return_to = query_of(resp.headers["Location"])["return_to"]

    query = await upstream_login(await start(client, return_to), EMAIL)
    resp = await callback(client, query)
    html = await resp.text()
    assert resp.status == 409, html
    assert "already exists" in html and "then link TestIdP" in html
    assert (
        f'name="email" type="email" autocomplete="username webauthn" required value="{EMAIL}"'
        in html
    )
    hidden = [v.replace("&amp;", "&") for v in _HIDDEN.findall(html)]
    assert hidden == [return_to]

    form: dict[str, Any] = {"email": EMAIL, "password": PASSWORD, "csrf_token": csrf_of(client),
                            "return_to": hidden[0]}  # fmt: skip
    resp = await client.post("/ui/login", data=form, headers=ORIGIN, allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"] == return_to
    resp = await client.get(return_to, allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"].startswith(REDIRECT)
    assert "code" in query_of(resp.headers["Location"])
    async with container_of(client).storage().read() as uow:
        assert await uow.identities.list_for_user(user_id) == []
