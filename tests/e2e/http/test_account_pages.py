"""The account pages over HTTP (docs/reference/accounts.md, "The account pages"): sessions (end
one, end all others), connected apps (revoke), resend the verification mail — each action, and its
refusals (no CSRF token, another user's session, an unknown app, the resend throttle), checked
afterwards over the JSON API (/me/sessions, /me/consents, /refresh, /me/email/verify) on SQLite
and PostgreSQL."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from aiohttp.test_utils import TestClient

from domain.audit import AuditQuery
from tests.e2e.helpers import ONE_PER_BACKEND, PASSWORD, MakeClient, bearer, container_of
from tests.e2e.oidc_helpers import (
    ORIGIN,
    csrf_of,
    full_flow,
    refresh,
    register_client,
    register_user,
    sign_in,
)
from tests.smtp import SmtpSink, smtp_env, smtp_server

__all__ = ["smtp_server"]  # the fixture, for pytest

ALICE, BOB = "alice@example.com", "bob@example.com"
FIREFOX = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0"
IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
          "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1")  # fmt: skip


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend (nothing here depends on the alg)."""
    return request.param  # type: ignore[no-any-return]


async def _api_login(client: TestClient, email: str = ALICE,
                     agent: str | None = None) -> dict[str, Any]:  # fmt: skip
    headers = {"User-Agent": agent} if agent else {}
    resp = await client.post("/login", json={"email": email, "password": PASSWORD},
                             headers=headers)  # fmt: skip
    assert resp.status == 200, await resp.text()
    return await resp.json()  # type: ignore[no-any-return]


async def _sessions(client: TestClient, access: str) -> list[dict[str, Any]]:
    resp = await client.get("/me/sessions", headers=bearer(access))
    assert resp.status == 200, await resp.text()
    return (await resp.json())["items"]  # type: ignore[no-any-return]


async def _session_ids(client: TestClient, access: str) -> list[str]:
    """The ids of the caller's live sessions (the hosted session's ``last_used_at`` moves with
    each page it shows)."""
    return [s["id"] for s in await _sessions(client, access)]


async def _post(client: TestClient, path: str, **form: str) -> Any:
    data = {"csrf_token": csrf_of(client), **form}
    return await client.post(path, data=data, headers=ORIGIN, allow_redirects=False)


async def _refreshes(client: TestClient, token: str) -> bool:
    resp = await client.post("/refresh", json={"refresh_token": token})
    return resp.status == 200


async def _ended_reasons(client: TestClient, user_id: str) -> list[str]:
    async with container_of(client).storage().read() as uow:
        rows = await uow.audit.list_page(AuditQuery(user_id=user_id), None, 100)
    return [str(r.details_dict().get("reason")) for r in rows if r.type == "session.ended"]


async def test_the_sessions_page_names_devices_and_ends_one_then_all_others(
    client: TestClient,
) -> None:
    """The page lists every live session (device from the user agent, address, app, "this
    session" marked once); "End" ends exactly that one; "End all other sessions" ends the
    rest and this browser stays signed in — each checked over /me/sessions and /refresh."""
    alice = await register_user(client, ALICE)
    phone = await _api_login(client, agent=IPHONE)
    laptop = await _api_login(client, agent=FIREFOX)
    await sign_in(client, "/ui/account/sessions")
    resp = await client.get("/ui/account/sessions")
    text = await resp.text()
    assert resp.status == 200 and resp.content_type == "text/html"
    assert "Mobile Safari 17 on iOS (iPhone)" in text and "Firefox 133 on Windows" in text
    assert text.count("This session</strong>") == 1 and "127.0.0.1" in text
    listed = await _sessions(client, laptop["access_token"])
    assert len(listed) == 3
    phone_id = next(s["id"] for s in listed if s["user_agent"] == IPHONE)
    assert f'data-session="{phone_id}"' in text

    resp = await _post(client, "/ui/account/sessions/end", session_id=phone_id)
    assert resp.status == 303
    assert resp.headers["Location"] == "/ui/account/sessions?done=ended"
    assert phone_id not in {s["id"] for s in await _sessions(client, laptop["access_token"])}
    assert not await _refreshes(client, phone["refresh_token"])
    assert "The session was ended." in await (await client.get(resp.headers["Location"])).text()

    resp = await _post(client, "/ui/account/sessions/end-others")
    assert resp.status == 303
    assert not await _refreshes(client, laptop["refresh_token"])
    page = await client.get("/ui/account/sessions", allow_redirects=False)
    text = await page.text()
    assert page.status == 200 and "This is your only session." in text  # still signed in
    assert "Every other session was ended." not in text  # only after the POST
    fresh = await _api_login(client)
    assert len(await _sessions(client, fresh["access_token"])) == 2  # the page's and fresh
    assert await _ended_reasons(client, alice) == ["user", "user"]


async def test_session_refusals_change_nothing(client: TestClient) -> None:
    """No CSRF token, a foreign ``Origin``, another user's session id and no hosted session
    are refused (403, 403, 404 page, 303 to the login page) and every session lives on."""
    await register_user(client, ALICE)
    await register_user(client, BOB)
    bob = await _api_login(client, BOB)
    (bobs,) = await _sessions(client, bob["access_token"])
    mine = await _api_login(client)
    await sign_in(client, "/ui/account")
    before = await _session_ids(client, mine["access_token"])
    assert len(before) == 2

    resp = await client.post("/ui/account/sessions/end", data={"session_id": before[0]},
                             headers=ORIGIN, allow_redirects=False)  # fmt: skip
    assert resp.status == 403 and resp.content_type == "text/html"
    form = {"csrf_token": csrf_of(client)}
    resp = await client.post("/ui/account/sessions/end-others", data=form,
                             headers={"Origin": "https://evil.example"})  # fmt: skip
    assert resp.status == 403
    resp = await _post(client, "/ui/account/sessions/end", session_id=bobs["id"])
    assert resp.status == 404 and resp.content_type == "text/html"
    assert "not yours" in await resp.text()
    resp = await _post(client, "/ui/account/sessions/end", session_id="x" * 500)
    assert resp.status == 404
    assert await _sessions(client, bob["access_token"]) == [bobs]
    assert await _session_ids(client, mine["access_token"]) == before

    client.session.cookie_jar.clear()
    for path in ("/ui/account", "/ui/account/sessions", "/ui/account/apps"):
        resp = await client.get(path, allow_redirects=False)
        assert resp.status == 303 and resp.headers["Location"].startswith("/ui/login?")
    await client.get("/ui/login")  # a CSRF cookie again, no session
    resp = await _post(client, "/ui/account/sessions/end-others")
    assert resp.status == 303 and resp.headers["Location"].startswith("/ui/login?")
    assert await _session_ids(client, mine["access_token"]) == before


async def test_a_connected_app_is_listed_and_revoked_with_its_refresh_tokens(
    client: TestClient,
) -> None:
    """An app the user allowed through the code flow is listed (name, scopes in words,
    granted at); "Revoke" ends its consent and its refresh token (as DELETE
    /me/consents/{client_id}); an unknown client id and a missing CSRF token change nothing."""
    await register_user(client, ALICE)
    app = await register_client(client, name="Photo Printer")
    tokens, _ = await full_flow(client, app, scope="openid email offline_access")
    page = await client.get("/ui/account/apps")
    text = await page.text()
    assert page.status == 200
    assert "Photo Printer" in text and "See your email address" in text
    assert f'data-client="{app.id}"' in text
    access = (await _api_login(client))["access_token"]

    resp = await client.post("/ui/account/apps/revoke", data={"client_id": app.id},
                             headers=ORIGIN, allow_redirects=False)  # fmt: skip
    assert resp.status == 403
    resp = await _post(client, "/ui/account/apps/revoke", client_id="no-such-client")
    assert resp.status == 404 and resp.content_type == "text/html"
    consents = await (await client.get("/me/consents", headers=bearer(access))).json()
    assert [c["client_id"] for c in consents["items"]] == [app.id]

    resp = await _post(client, "/ui/account/apps/revoke", client_id=app.id)
    assert resp.status == 303 and resp.headers["Location"] == "/ui/account/apps?done=revoked"
    consents = await (await client.get("/me/consents", headers=bearer(access))).json()
    assert consents["items"] == []
    assert (await refresh(client, app, tokens["refresh_token"])).status == 400
    text = await (await client.get(resp.headers["Location"])).text()
    assert "access was revoked" in text and "Photo Printer" not in text


async def test_resend_verification_mails_a_link_and_its_throttle_is_the_apis(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> None:
    """While the email is unverified the overview offers "Send the verification link again":
    it mails a new link (303 with a notice); past the throttle the page answers 429 with
    ``Retry-After`` and a message, and the JSON API's POST /me/email/verify is refused too
    (one bucket). Once verified, the button is gone."""
    sink, port = smtp_server
    client = await make_client({**smtp_env(port), "AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "2"})
    await register_user(client, ALICE)
    await sink.wait_for(ALICE)  # the registration's message
    await sign_in(client, "/ui/account")
    text = await (await client.get("/ui/account")).text()
    assert "Not verified yet" in text and 'id="resend-verification"' in text

    resp = await _post(client, "/ui/account/email/verify")
    assert resp.status == 303
    assert resp.headers["Location"] == "/ui/account?done=verification_sent"
    await sink.wait_for(ALICE, count=2)
    assert "We sent a new verification link" in await (await client.get(
        resp.headers["Location"])).text()  # fmt: skip
    assert (await _post(client, "/ui/account/email/verify")).status == 303
    await sink.wait_for(ALICE, count=3)
    resp = await _post(client, "/ui/account/email/verify")
    assert resp.status == 429 and resp.content_type == "text/html"
    assert int(resp.headers["Retry-After"]) > 0 and "too many" in (await resp.text()).lower()
    access = (await _api_login(client))["access_token"]
    assert (await client.post("/me/email/verify", headers=bearer(access))).status == 429
    assert len(sink.to(ALICE)) == 3

    async with container_of(client).storage().begin() as uow:
        user = await uow.users.get_by_email(ALICE)
        assert user is not None
        await uow.users.update(attrs.evolve(user, email_verified=True))
        await uow.commit()
    text = await (await client.get("/ui/account")).text()
    assert "Verified" in text and 'id="resend-verification"' not in text
