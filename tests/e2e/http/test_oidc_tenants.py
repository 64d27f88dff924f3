"""Consent across tenants over HTTP (docs/reference/oauth-and-oidc.md, ADR 0036; security review
s5, findings 1 and 11), on SQLite and PostgreSQL.

- ``skip_consent`` and ``all_organizations`` are set only by a superadmin (or the command line,
  ``test_cli_clients``): an org_admin's registration, change or console form carrying either
  is 403 ``forbidden`` and nothing is created or changed.
- A code-flow client signs in only users of its own organization: another organization's user
  (a superadmin too) gets ``access_denied`` at the redirect URI, audited ``oauth.denied``
  (``details.reason = "organization"``), also through a forged consent POST and with
  ``prompt=none``. ``all_organizations`` (by a superadmin) lets them in, through the consent
  page; ``skip_consent`` skips that page only for the client's own organization's users.
- The consent page names the client's organization, the redirect URI's host and who is signed
  in, with "not you?" → a new login, after which the page names the new user.

The world: a superadmin ``root`` of ``default``; ``globex``, whose org_admin registers the
client; ``alice`` of ``default`` and ``bob`` of ``globex``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import attrs
import pytest
from aiohttp.test_utils import TestClient

from domain.audit import AuditQuery
from domain.model import Role
from tests.e2e.accounts_world import ROOT, add_user, login
from tests.e2e.helpers import ONE_PER_BACKEND, assert_problem, bearer, container_of
from tests.e2e.http.test_admin_console import post
from tests.e2e.oidc_helpers import (
    ISSUER,
    ORIGIN,
    REDIRECT,
    Registered,
    auth_params,
    authorize,
    code_via_browser,
    consent,
    csrf_of,
    pkce,
    query_of,
    sign_in,
)

GLOBEX = "globex"
ADMIN_B = "admin@globex.example"
ALICE = "alice@example.com"  # of default, root's organization
BOB = "bob@globex.example"


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend (nothing here depends on the alg)."""
    return request.param  # type: ignore[no-any-return]


@attrs.frozen
class Tenants:
    """The app, bearer tokens of ``root`` and of globex's org_admin, and users' ids."""

    http: TestClient
    root: str
    admin: str
    ids: dict[str, str]


async def tenants(http: TestClient) -> Tenants:
    container = container_of(http)
    root = (await container.create_superadmin()(ROOT, "correct horse battery")).user
    ids = {ROOT: root.id}
    ids[ADMIN_B] = await add_user(http, ADMIN_B, Role.ORG_ADMIN, GLOBEX)
    ids[ALICE] = await add_user(http, ALICE)
    ids[BOB] = await add_user(http, BOB, org_id=GLOBEX)
    tokens = [(await login(http, who))["access_token"] for who in (ROOT, ADMIN_B)]
    return Tenants(http, tokens[0], tokens[1], ids)


CODE_FLOW = {"name": "Globex Portal", "scopes": [], "redirect_uris": [REDIRECT],
             "grant_types": ["authorization_code", "refresh_token"]}  # fmt: skip


async def register(t: Tenants, token: str, status: int = 201, **extra: Any) -> Any:
    resp = await t.http.post("/oauth/clients", json={**CODE_FLOW, **extra}, headers=bearer(token))
    if status != 201:
        return resp
    assert resp.status == 201, await resp.text()
    body = await resp.json()
    async with container_of(t.http).storage().begin() as uow:
        record = await uow.clients.get(body["client_id"])
    assert record is not None
    return Registered(body["client_id"], body["client_secret"], record)


async def patch(t: Tenants, token: str, client_id: str, **body: Any) -> Any:
    return await t.http.patch(f"/oauth/clients/{client_id}", json=body, headers=bearer(token))


async def record_of(t: Tenants, client_id: str) -> dict[str, Any]:
    resp = await t.http.get(f"/oauth/clients/{client_id}", headers=bearer(t.root))
    assert resp.status == 200
    return await resp.json()  # type: ignore[no-any-return]


async def audit(t: Tenants, kind: str) -> list[Any]:
    async with container_of(t.http).storage().begin() as uow:
        return await uow.audit.list_page(AuditQuery(type=kind), None, 100)


async def as_user(t: Tenants, email: str) -> None:
    """A fresh cookie jar signed in to the hosted pages as ``email``."""
    t.http.session.cookie_jar.clear()
    await sign_in(t.http, "/ui/signed-in", email)


async def test_only_a_superadmin_or_the_command_line_sets_the_first_party_fields(
    client: TestClient,
) -> None:
    t = await tenants(client)
    for carried in ({"skip_consent": True}, {"all_organizations": True},
                    {"skip_consent": False}, {"skip_consent": True, "all_organizations": True}):  # fmt: skip
        await assert_problem(await register(t, t.admin, 403, **carried), 403, "forbidden")
    listed = await (await client.get("/oauth/clients", headers=bearer(t.admin))).json()
    assert listed["items"] == [] and await audit(t, "client.created") == []  # nothing created
    app = await register(t, t.admin)
    before = await record_of(t, app.id)
    assert (before["skip_consent"], before["all_organizations"]) == (False, False)
    for carried in ({"skip_consent": True}, {"all_organizations": True},
                    {"redirect_uris": ["https://globex.example/cb"], "skip_consent": True}):  # fmt: skip
        await assert_problem(await patch(t, t.admin, app.id, **carried), 403, "forbidden")
    assert await record_of(t, app.id) == before and await audit(t, "client.updated") == []
    # The console: no such boxes for the org_admin; a forged box is ignored (the form reads only
    # the fields it shows), a forged update is the 403 page; nothing is set either way.
    await as_user(t, ADMIN_B)
    page = await (await client.get(f"/ui/admin/clients/{app.id}")).text()
    assert 'name="skip_consent"' not in page and 'name="all_organizations"' not in page
    assert 'name="skip_consent"' not in await (await client.get("/ui/admin/clients")).text()
    resp = await post(client, "/ui/admin/clients", {"name": "forged", "grant_authorization_code":
                      "on", "redirect_uris": REDIRECT, "skip_consent": "on"})  # fmt: skip
    assert resp.status in (303, 422), await resp.text()
    resp = await post(client, f"/ui/admin/clients/{app.id}/update",
                      {"redirect_uris": "https://globex.example/cb", "all_organizations": "on"})  # fmt: skip
    assert resp.status in (403, 422)  # /update takes only ``disabled``: refused either way
    resp = await post(
        client,
        f"/ui/admin/clients/{app.id}/update",
        {"redirect_uris": REDIRECT, "first_party": "1"},
    )  # the boxes, unchecked
    assert resp.status in (403, 422)
    assert await record_of(t, app.id) == before
    listed = await (await client.get("/oauth/clients", headers=bearer(t.admin))).json()
    assert [c["client_id"] for c in listed["items"] if c["name"] != "forged"] == [app.id]
    assert not any(c["skip_consent"] or c["all_organizations"] for c in listed["items"])
    # A superadmin sets them over the API and in the console.
    resp = await patch(t, t.root, app.id, skip_consent=True, all_organizations=True)
    assert resp.status == 200, await resp.text()
    changed = await resp.json()
    assert (changed["skip_consent"], changed["all_organizations"]) == (True, True)
    await as_user(t, ROOT)
    page = await (await client.get(f"/ui/admin/clients/{app.id}")).text()
    assert 'name="all_organizations" checked' in page
    resp = await post(client, f"/ui/admin/clients/{app.id}/edit",
                      {"name": "app", "redirect_uris": REDIRECT, "skip_consent": "on",
                       "grant_types__authorization_code": "on"})  # fmt: skip
    assert resp.status == 303, await resp.text()
    after = await record_of(t, app.id)
    assert (after["skip_consent"], after["all_organizations"]) == (True, False)
    made = await register(t, t.root, org_id=GLOBEX, skip_consent=True, all_organizations=True)
    assert (made.record.skip_consent, made.record.all_organizations) == (True, True)


async def _denied(t: Tenants, app: Registered, **extra: str) -> dict[str, str]:
    resp = await authorize(t.http, auth_params(app, pkce()[1], **extra))
    assert resp.status == 303, await resp.text()
    location = resp.headers["Location"]
    assert location.startswith(REDIRECT), location
    return query_of(location)


async def test_a_client_signs_in_only_users_of_its_organization(client: TestClient) -> None:
    t = await tenants(client)
    app = await register(t, t.admin)
    await as_user(t, BOB)  # its organization's user: the consent page, then a code
    assert "code" in await code_via_browser(client, app, auth_params(app, pkce()[1]), BOB)
    for victim in (ALICE, ROOT):  # another organization's, a superadmin too
        await as_user(t, victim)
        for extra in ({}, {"prompt": "none"}, {"prompt": "consent"}):
            query = await _denied(t, app, **extra)
            assert (query["error"], query["state"], query["iss"]) == ("access_denied", "st-1",
                                                                     ISSUER)  # fmt: skip
            assert "code" not in query
    # A consent form posted straight to /ui/consent gets the same answer and stores nothing.
    return_to = "/oauth/authorize?" + urlencode(auth_params(app, pkce()[1]))
    form = {"decision": "allow", "csrf_token": csrf_of(client), "return_to": return_to}
    resp = await client.post("/ui/consent", data=form, headers=ORIGIN, allow_redirects=False)
    assert resp.status == 303 and query_of(resp.headers["Location"])["error"] == "access_denied"
    rows = await audit(t, "oauth.denied")
    assert len(rows) == 7
    assert {(r.user_id, r.actor_id) for r in rows} == {(t.ids[ALICE], t.ids[ALICE]),
                                                       (t.ids[ROOT], t.ids[ROOT])}  # fmt: skip
    assert {r.org_id for r in rows} == {"default"}  # the user's organization sees it
    assert all(r.details_dict() == {"client_id": app.id, "reason": "organization"} for r in rows)
    async with container_of(client).storage().begin() as uow:
        assert await uow.consents.get(t.ids[ROOT], app.id) is None
    assert [r.user_id for r in await audit(t, "oauth.authorized")] == [t.ids[BOB]]

    # all_organizations (by a superadmin) lets them in, through the consent page even with
    # skip_consent, which spares only the client's own organization's users the page.
    resp = await patch(t, t.root, app.id, skip_consent=True, all_organizations=True)
    assert resp.status == 200
    resp = await authorize(client, auth_params(app, pkce()[1]))  # root, signed in
    assert resp.headers["Location"].startswith("/ui/consent?")
    location = await consent(client, resp.headers["Location"], "allow")
    assert "code" in query_of(location)
    await as_user(t, BOB)
    resp = await authorize(client, auth_params(app, pkce()[1], scope="openid email"))
    assert "code" in query_of(resp.headers["Location"])  # a new scope, and no page
    resp = await patch(t, t.root, app.id, all_organizations=False)
    await as_user(t, ALICE)
    assert (await _denied(t, app))["error"] == "access_denied"


async def test_the_consent_page_names_the_organization_the_host_and_who_is_signed_in(
    client: TestClient,
) -> None:
    t = await tenants(client)
    app = await register(t, t.root, org_id=GLOBEX, all_organizations=True,
                         redirect_uris=[REDIRECT, "com.globex.app:/cb"])  # fmt: skip
    await as_user(t, ALICE)
    resp = await authorize(client, auth_params(app, pkce()[1], prompt="consent"))
    consent_url = resp.headers["Location"]
    html = await (await client.get(consent_url)).text()
    assert "Globex Portal" in html and "the organization globex" in html
    assert '<dd id="redirect-host">app.example.com</dd>' in html
    assert f"{ALICE} (<a" in html
    not_you = html.split('id="not-you" href="')[1].split('"')[0].replace("&amp;", "&")
    parts = urlsplit(not_you)
    query = parse_qs(parts.query)
    assert parts.path == "/oauth/authorize" and query["prompt"] == ["consent login"]
    assert query["client_id"] == [app.id] and "authsvc_login_after" not in query
    # "not you?": a new login, then the page for whoever signed in.
    resp = await client.get(not_you, allow_redirects=False)
    assert resp.headers["Location"].startswith("/ui/login?"), resp.headers["Location"]
    return_to = query_of(resp.headers["Location"])["return_to"]
    location = await sign_in(client, return_to, BOB)
    resp = await client.get(location, allow_redirects=False)
    assert resp.headers["Location"].startswith("/ui/consent?"), resp.headers["Location"]
    html = await (await client.get(resp.headers["Location"])).text()
    assert f"{BOB} (<a" in html and ALICE not in html
    # A private-use redirect URI (RFC 8252 §7.1) is named by its scheme.
    params = auth_params(app, pkce()[1], redirect_uri="com.globex.app:/cb")
    resp = await authorize(client, params)
    html = await (await client.get(resp.headers["Location"])).text()
    assert '<dd id="redirect-host">com.globex.app:</dd>' in html
