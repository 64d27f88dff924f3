"""The authorization decisions of ``/oauth/authorize`` (docs/reference/oauth-and-oidc.md; OpenID
Connect Core 1.0 §3.1.2) as a table: the request, the browser's hosted session, a stored consent
and the client → a code, the login page, the consent page or an error code, with no HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from application.oauth.authorize import AuthorizePageError
from application.oauth.interaction import ConsentNeeded, LoginNeeded, Redirect
from domain.oidc import Consent
from tests.unit.application.harness import REDIRECT_URI, Harness, build_harness, pkce_pair

OTHER_ORG = "other-org"


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    return build_harness(tmp_path)


def _request(client_id: str, /, **params: str | None) -> list[tuple[str, str]]:
    """An authorization request of ``client_id``; ``params`` add to or (None) remove the
    defaults."""
    _, challenge = pkce_pair()
    values: dict[str, str | None] = {
        "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT_URI,
        "scope": "openid", "state": "st", "code_challenge": challenge,
        "code_challenge_method": "S256",
    }  # fmt: skip
    values.update(params)
    return [(k, v) for k, v in values.items() if v is not None]


def _outcome(result: Any) -> str:
    """``code``, ``login``, ``consent`` or ``error=<code>``."""
    if isinstance(result, LoginNeeded):
        return "login"
    if isinstance(result, ConsentNeeded):
        return "consent"
    assert isinstance(result, Redirect)
    assert result.location.startswith(REDIRECT_URI + "?")
    query = parse_qs(urlsplit(result.location).query)
    assert query["state"] == ["st"]
    if "error" in query:
        return "error=" + query["error"][0]
    assert query["code"]
    return "code"


# (case, request parameters, signed in, consent stored, client fields, seconds since the
# login) → the decision.
DECISIONS: list[tuple[str, dict[str, str | None], bool, bool, dict[str, Any], int, str]] = [
    ("signed out: the login page", {}, False, False, {}, 0, "login"),
    ("signed out, prompt=none", {"prompt": "none"}, False, False, {}, 0, "error=login_required"),
    ("consent stored: a code", {}, True, True, {}, 0, "code"),
    ("no consent: the consent page", {}, True, False, {}, 0, "consent"),
    ("no consent, prompt=none", {"prompt": "none"}, True, False, {}, 0,
     "error=consent_required"),
    ("consent stored, prompt=none: a code", {"prompt": "none"}, True, True, {}, 0, "code"),
    ("prompt=consent asks even with a consent", {"prompt": "consent"}, True, True, {}, 0,
     "consent"),
    ("a scope beyond the consent asks again", {"scope": "openid offline_access"}, True, True,
     {}, 0, "consent"),
    ("skip_consent: a code for its own users", {}, True, False, {"skip_consent": True}, 0,
     "code"),
    ("skip_consent does not spare other organizations' users", {}, True, False,
     {"skip_consent": True, "all_organizations": True, "org_id": OTHER_ORG}, 0, "consent"),
    ("prompt=login forces a login", {"prompt": "login"}, True, True, {}, 0, "login"),
    ("max_age exceeded forces a login", {"max_age": "60"}, True, True, {}, 61, "login"),
    ("max_age not exceeded: a code", {"max_age": "60"}, True, True, {}, 60, "code"),
    ("max_age exceeded, prompt=none", {"max_age": "60", "prompt": "none"}, True, True, {}, 61,
     "error=login_required"),
    ("a client of another organization", {}, True, True, {"org_id": OTHER_ORG}, 0,
     "error=access_denied"),
    ("all_organizations admits everyone", {}, True, True,
     {"org_id": OTHER_ORG, "all_organizations": True}, 0, "code"),
    ("no code_challenge: PKCE required", {"code_challenge": None}, True, True, {}, 0,
     "error=invalid_request"),
    ("code_challenge_method plain", {"code_challenge_method": "plain"}, True, True, {}, 0,
     "error=invalid_request"),
    ("response_type token", {"response_type": "token"}, True, True, {}, 0,
     "error=unsupported_response_type"),
    ("no response_type", {"response_type": None}, True, True, {}, 0, "error=invalid_request"),
    ("a client without the code grant", {}, True, True,
     {"grant_types": ("client_credentials",)}, 0, "error=unauthorized_client"),
    ("a scope the client may not ask", {"scope": "openid admin"}, True, True, {}, 0,
     "error=invalid_scope"),
    ("prompt=none with login", {"prompt": "none login"}, True, True, {}, 0,
     "error=invalid_request"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("params", "signed_in", "consented", "client_fields", "age", "expected"),
    [pytest.param(*row[1:], id=row[0]) for row in DECISIONS],
)
async def test_authorize_decides(
    harness: Harness,
    params: dict[str, str | None],
    signed_in: bool,
    consented: bool,
    client_fields: dict[str, Any],
    age: int,
    expected: str,
) -> None:
    user = await harness.add_user()
    client = await harness.add_client(**client_fields)
    cookie = await harness.sign_in(user, client.id) if signed_in else None
    if consented:
        async with harness.storage.begin() as uow:
            await uow.consents.grant(Consent(user.id, client.id, ("openid",), harness.clock.now()))
            await uow.commit()
    harness.clock.advance(age)
    authorize = harness.container.authorize()
    assert _outcome(await authorize(_request(client.id, **params), cookie)) == expected


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({"redirect_uri": "https://evil.example/cb"}, id="unknown redirect_uri"),
        pytest.param({"redirect_uri": None}, id="no redirect_uri"),
        pytest.param({"client_id": "0" * 32}, id="unknown client"),
    ],
)
async def test_authorize_never_redirects_to_an_unchecked_target(
    harness: Harness, params: dict[str, str | None]
) -> None:
    user = await harness.add_user()
    client = await harness.add_client()
    cookie = await harness.sign_in(user, client.id)
    with pytest.raises(AuthorizePageError):
        await harness.container.authorize()(_request(client.id, **params), cookie)


async def test_a_forced_login_is_satisfied_by_the_login_it_asked_for(harness: Harness) -> None:
    """``prompt=login``: the login page's ``return_to`` carries a marker that the fresh login
    satisfies, so the same request then gets a code instead of the login page again."""
    user = await harness.add_user()
    client = await harness.add_client(skip_consent=True)
    authorize = harness.container.authorize()
    asked = await authorize(_request(client.id, prompt="login"), await harness.sign_in(user))
    assert isinstance(asked, LoginNeeded)
    harness.clock.advance(1)
    again = parse_qs(urlsplit(asked.return_to).query)
    pairs = [(k, v[0]) for k, v in again.items()]
    assert _outcome(await authorize(pairs, await harness.sign_in(user))) == "code"


@pytest.mark.parametrize(("allow", "expected"), [(True, "code"), (False, "error=access_denied")])
async def test_the_consent_page_decision(harness: Harness, allow: bool, expected: str) -> None:
    """The consent page's answer: allow stores the consent and issues the code, so the next
    request needs no page; refuse answers ``access_denied`` and stores nothing."""
    user = await harness.add_user()
    client = await harness.add_client()
    cookie = await harness.sign_in(user, client.id)
    authorize = harness.container.authorize()
    assert _outcome(await authorize.decide(_request(client.id), cookie, allow)) == expected
    assert _outcome(await authorize(_request(client.id), cookie)) == (
        "code" if allow else "consent"
    )


async def test_the_consent_decision_of_a_client_of_another_organization(harness: Harness) -> None:
    user = await harness.add_user()
    client = await harness.add_client(org_id=OTHER_ORG)
    cookie = await harness.sign_in(user, client.id)
    decided = await harness.container.authorize().decide(_request(client.id), cookie, True)
    assert _outcome(decided) == "error=access_denied"


async def test_a_disabled_client_gets_the_error_page(harness: Harness) -> None:
    client = await harness.add_client(disabled=True)
    with pytest.raises(AuthorizePageError):
        await harness.container.authorize()(_request(client.id), None)


async def test_the_session_of_a_user_disabled_since_does_not_count(harness: Harness) -> None:
    user = await harness.add_user()
    client = await harness.add_client(skip_consent=True)
    cookie = await harness.sign_in(user, client.id)
    await harness.update_user(user, disabled=True)
    authorize = harness.container.authorize()
    assert _outcome(await authorize(_request(client.id), cookie)) == "login"
    assert _outcome(await authorize(_request(client.id, prompt="none"), cookie)) == (
        "error=login_required"
    )
