"""The authorization code exchange (docs/reference/oauth-and-oidc.md; OAuth 2.1 §4.1.3, RFC 7636,
RFC 9700 §4.2.4) over memory storage and a fixed clock: PKCE S256, single use with the first
use's family ended on a reuse, expiry, the client and redirect URI the code was issued for, and
the login it came from."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import attrs
import jwt
import pytest

from application.events.oidc import CodeReused
from application.oauth.grants import OAuthError
from application.oauth.interaction import Redirect
from domain.clients import Client
from domain.model import User
from tests.unit.application.harness import REDIRECT_URI, Harness, build_harness, pkce_pair


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    return build_harness(tmp_path)


@attrs.define
class Issued:
    """A code issued to ``client`` for ``user`` under the hosted session ``cookie``."""

    user: User
    client: Client
    cookie: str
    code: str
    verifier: str


async def _issue(harness: Harness, scope: str = "openid offline_access") -> Issued:
    user = await harness.add_user()
    client = await harness.add_client(skip_consent=True)
    cookie = await harness.sign_in(user, client.id)
    verifier, challenge = pkce_pair()
    pairs = [
        ("response_type", "code"), ("client_id", client.id), ("redirect_uri", REDIRECT_URI),
        ("scope", scope), ("code_challenge", challenge), ("code_challenge_method", "S256"),
    ]  # fmt: skip
    redirect = await harness.container.authorize()(pairs, cookie)
    assert isinstance(redirect, Redirect)
    code = parse_qs(urlsplit(redirect.location).query)["code"][0]
    return Issued(user, client, cookie, code, verifier)


async def _exchange(
    harness: Harness, issued: Issued, *, client: Client | None = None,
    redirect_uri: str | None = REDIRECT_URI, verifier: str | None = None,
) -> Any:  # fmt: skip
    grants = harness.container.code_flow_grants()
    return await grants.authorization_code(
        client or issued.client, issued.code, redirect_uri,
        issued.verifier if verifier is None else verifier, None,
    )  # fmt: skip


async def test_the_right_verifier_gets_tokens_of_the_user(harness: Harness) -> None:
    issued = await _issue(harness)
    tokens = await _exchange(harness, issued)
    claims = jwt.decode(tokens.id_token, options={"verify_signature": False})
    assert claims["sub"] == issued.user.id
    assert claims["aud"] == issued.client.id
    assert tokens.refresh_token


async def _wrong_verifier(harness: Harness, issued: Issued) -> Any:
    return await _exchange(harness, issued, verifier=pkce_pair()[0])


async def _other_client(harness: Harness, issued: Issued) -> Any:
    other = await harness.add_client()
    return await _exchange(harness, issued, client=other)


async def _other_redirect_uri(harness: Harness, issued: Issued) -> Any:
    return await _exchange(harness, issued, redirect_uri=REDIRECT_URI + "/other")


async def _no_redirect_uri(harness: Harness, issued: Issued) -> Any:
    return await _exchange(harness, issued, redirect_uri=None)


async def _expired(harness: Harness, issued: Issued) -> Any:
    harness.clock.advance(harness.container.config().oidc.code_ttl)
    return await _exchange(harness, issued)


async def _login_ended(harness: Harness, issued: Issued) -> Any:
    assert await harness.container.hosted_login().logout(issued.cookie, None)
    return await _exchange(harness, issued)


async def _newer_login(harness: Harness, issued: Issued) -> Any:
    hosted = harness.container.hosted_login()
    await hosted.password(issued.user.email, "correct horse battery", "192.0.2.7", "ua", None,
                          issued.cookie)  # fmt: skip
    return await _exchange(harness, issued)


async def _user_disabled(harness: Harness, issued: Issued) -> Any:
    await harness.update_user(issued.user, disabled=True)
    return await _exchange(harness, issued)


REFUSALS: dict[str, Callable[[Harness, Issued], Awaitable[Any]]] = {
    "wrong PKCE verifier": _wrong_verifier,
    "another client": _other_client,
    "another redirect_uri": _other_redirect_uri,
    "no redirect_uri": _no_redirect_uri,
    "expired (code_ttl)": _expired,
    "the login ended (logout)": _login_ended,
    "the login ended (a newer login in that browser)": _newer_login,
    "the user disabled": _user_disabled,
}


@pytest.mark.parametrize("spoil", REFUSALS.values(), ids=REFUSALS.keys())
async def test_a_refused_exchange_is_invalid_grant_and_changes_nothing(
    harness: Harness, spoil: Callable[[Harness, Issued], Awaitable[Any]]
) -> None:
    issued = await _issue(harness)
    with pytest.raises(OAuthError) as refused:
        await spoil(harness, issued)
    assert refused.value.error == "invalid_grant"
    assert harness.recorder.of(CodeReused) == []
    async with harness.storage.read() as uow:
        live = await uow.sessions.list_live(issued.user.id, harness.clock.now())
    assert [s.client_id for s in live if s.client_id is not None] == []  # no family started


async def test_a_wrong_verifier_leaves_the_code_usable(harness: Harness) -> None:
    issued = await _issue(harness)
    with pytest.raises(OAuthError):
        await _wrong_verifier(harness, issued)
    assert await _exchange(harness, issued)


async def test_a_reused_code_is_refused_and_ends_the_family_of_its_first_use(
    harness: Harness,
) -> None:
    issued = await _issue(harness)
    first = await _exchange(harness, issued)
    harness.clock.advance(1)
    with pytest.raises(OAuthError) as reused:
        await _exchange(harness, issued)
    assert reused.value.error == "invalid_grant"
    [event] = harness.recorder.of(CodeReused)
    assert (event.user_id, event.client_id) == (issued.user.id, issued.client.id)
    grants = harness.container.code_flow_grants()
    with pytest.raises(OAuthError) as refreshed:
        await grants.refresh(issued.client, first.refresh_token, None, None)
    assert refreshed.value.error == "invalid_grant"
    assert event.family_id is not None
    async with harness.storage.read() as uow:
        assert await uow.sessions.get(event.family_id) is None


async def test_a_code_reused_at_the_same_instant_is_refused(harness: Harness) -> None:
    issued = await _issue(harness)
    await _exchange(harness, issued)
    with pytest.raises(OAuthError):
        await _exchange(harness, issued)
