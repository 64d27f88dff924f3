"""An ML-DSA ID token as ``id_token_hint`` (docs/reference/oauth-and-oidc.md and
docs/reference/tokens-and-sessions.md): ML-DSA-87 ID tokens run to about 6.7 kB, and every size
limit on the way (the authorization request's parameters, the login page's ``return_to``) takes
them."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient

from tests.e2e.oidc_helpers import (
    REDIRECT,
    auth_params,
    authorize,
    full_flow,
    pkce,
    query_of,
    register_client,
    register_user,
    sign_in,
)


@pytest.fixture(
    params=[
        pytest.param(("sqlite", "ML-DSA-87"), id="sqlite-ML-DSA-87"),
        pytest.param(("postgres", "ML-DSA-87"), id="postgres-ML-DSA-87",
                     marks=pytest.mark.postgres),
    ]
)  # fmt: skip
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """The largest signatures (ML-DSA-87) on each storage backend."""
    return request.param  # type: ignore[no-any-return]


async def test_an_ml_dsa_87_id_token_is_taken_as_id_token_hint(client: TestClient) -> None:
    """With the session: prompt=none + the hint → a code (before: invalid_request "too long").
    Without one: the login page, whose return_to carries the hint back → a code."""
    await register_user(client)
    app = await register_client(client, skip_consent=True)
    tokens, _ = await full_flow(client, app)
    hint = tokens["id_token"]
    assert len(hint) > 6000
    _, challenge = pkce()
    resp = await authorize(client, auth_params(app, challenge, prompt="none", id_token_hint=hint))
    query = query_of(resp.headers["Location"])
    assert "code" in query, query

    client.session.cookie_jar.clear()
    resp = await authorize(client, auth_params(app, challenge, id_token_hint=hint))
    location = resp.headers["Location"]
    assert location.startswith("/ui/login?"), location
    location = await sign_in(client, query_of(location)["return_to"])
    resp = await client.get(location, allow_redirects=False)
    assert resp.headers["Location"].startswith(REDIRECT + "?code="), resp.headers["Location"]
