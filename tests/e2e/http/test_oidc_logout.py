"""RP-initiated logout over HTTP (docs/reference/oauth-and-oidc.md; RP-Initiated Logout 1.0 §2): a
hint ends the browser's session without asking only when it names that session's user and login."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient

from tests.e2e.helpers import ONE_PER_BACKEND
from tests.e2e.oidc_helpers import (
    Registered,
    auth_params,
    authorize,
    code_via_browser,
    exchange,
    pkce,
    query_of,
    register_client,
    register_user,
)

BYE = "https://app.example.com/bye"


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


async def id_token_of(client: TestClient, app: Registered, email: str) -> str:
    """A new login of ``email`` in ``client``'s browser (its cookies cleared first) through the
    code flow; returns the ID token."""
    client.session.cookie_jar.clear()
    verifier, challenge = pkce()
    callback = await code_via_browser(client, app, auth_params(app, challenge), email)
    resp = await exchange(client, app, callback["code"], verifier)
    assert resp.status == 200, await resp.text()
    return str((await resp.json())["id_token"])


async def signed_in(client: TestClient, app: Registered) -> bool:
    """Whether the browser's hosted session still gives a code without a page."""
    _, challenge = pkce()
    resp = await authorize(client, auth_params(app, challenge, prompt="none"))
    return "code" in query_of(resp.headers["Location"])


async def test_a_hint_of_another_user_or_login_asks_first(client: TestClient) -> None:
    """bob's own ID token (the attacker's), or alice's of an earlier login, sent with alice's
    browser → the confirmation page, no redirect, alice still signed in; alice's current one
    → signed out, 303 to the registered URI exactly (no trailing ``?`` without ``state``)."""
    await register_user(client)
    await register_user(client, "bob@example.com")
    app = await register_client(client, skip_consent=True)
    earlier = await id_token_of(client, app, "alice@example.com")
    attackers = await id_token_of(client, app, "bob@example.com")
    current = await id_token_of(client, app, "alice@example.com")
    for hint in (attackers, earlier):
        params = {"id_token_hint": hint, "post_logout_redirect_uri": BYE, "state": "s1"}
        resp = await client.get("/oauth/logout", params=params, allow_redirects=False)
        assert resp.status == 200 and "Location" not in resp.headers
        assert 'action="/ui/logout"' in await resp.text()
        assert await signed_in(client, app)
    params = {"id_token_hint": current, "post_logout_redirect_uri": BYE}
    resp = await client.get("/oauth/logout", params=params, allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"] == BYE
    assert not await signed_in(client, app)
