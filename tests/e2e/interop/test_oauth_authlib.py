"""An independent OAuth client drives the service (docs/reference/oauth-and-oidc.md): authlib's
async client (on httpx) gets client credentials tokens with ``client_secret_basic`` and
``client_secret_post``, introspects them and revokes one, over real HTTP, on SQLite and
PostgreSQL."""

from __future__ import annotations

import pytest
from authlib.integrations.httpx_client import AsyncOAuth2Client

from tests.e2e.helpers import ONE_PER_BACKEND, MakeClient
from tests.e2e.http.test_oauth_http import machines


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend."""
    return request.param  # type: ignore[no-any-return]


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
async def test_authlib_gets_introspects_and_revokes_a_token(
    make_client: MakeClient, method: str
) -> None:
    m = await machines(make_client)
    client = await m.register(m.admin, scopes=["read", "write"])
    base = str(m.http.make_url("/")).rstrip("/")
    async with AsyncOAuth2Client(
        client["client_id"], client["client_secret"], scope="read",
        token_endpoint_auth_method=method,
    ) as oauth:  # fmt: skip
        token = await oauth.fetch_token(base + "/oauth/token", grant_type="client_credentials")
        assert token["token_type"] == "Bearer" and token["scope"] == "read"
        assert token["expires_in"] == 300
        seen = await oauth.introspect_token(base + "/oauth/introspect", token=token["access_token"])
        assert seen.status_code == 200 and seen.json()["active"] is True
        assert seen.json()["client_id"] == client["client_id"]
        revoked = await oauth.revoke_token(base + "/oauth/revoke", token=token["access_token"])
        assert revoked.status_code == 200
        seen = await oauth.introspect_token(base + "/oauth/introspect", token=token["access_token"])
        assert seen.json() == {"active": False}
