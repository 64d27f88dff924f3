"""The admin console over HTTP with a cookie jar (docs/reference/console.md): sign-in and role gate,
CSRF, every action per role and organization, each change checked over the JSON API afterwards.

The world is ``tests.e2e.accounts_world``'s: a superadmin ``root`` of ``default``, and in ``default``
and ``acme`` a viewer ``target`` (with a live session and a passkey), a group with a
``member``, and an OAuth client. The console's caller signs in on /ui/login (the hosted
session); the JSON API is read with a bearer token of the same caller.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import re
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from aiohttp.test_utils import TestClient

from domain.federation import FederatedIdentity
from domain.model import Role
from entrypoints.http.assets import STATIC
from tests.e2e.accounts_world import (
    HOME,
    OTHER,
    World,
    add_user,
    log_in_as,
    login,
    make_world,
)
from tests.e2e.accounts_world import base_env as base_env  # the shared key directory
from tests.e2e.accounts_world import shared_key_dir as shared_key_dir
from tests.e2e.helpers import ONE_PER_BACKEND, bearer
from tests.e2e.oidc_helpers import ORIGIN, csrf_of, sign_in


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


EMAILS = {"org_admin": f"org_admin@{HOME}.example", "superadmin": "root@example.com",
          "viewer": f"viewer@{HOME}.example", "operator": f"operator@{HOME}.example"}  # fmt: skip


async def console_as(world: World, role: str) -> str:
    """Sign the cookie jar in as ``role`` (a fresh jar); returns the caller's bearer token for
    the JSON API checks."""
    token = await log_in_as(world, role)
    world.client.session.cookie_jar.clear()
    location = await sign_in(world.client, "/ui/admin", EMAILS[role])
    assert location == "/ui/admin"
    return token


async def post(client: TestClient, path: str, form: dict[str, str] | None = None,
               origin: dict[str, str] = ORIGIN) -> Any:  # fmt: skip
    """POST a console form with the CSRF token; the response, redirects not followed."""
    data = {"csrf_token": csrf_of(client), **(form or {})}
    return await client.post(path, data=data, headers=origin, allow_redirects=False)


async def api(client: TestClient, token: str, path: str) -> Any:
    resp = await client.get(path, headers=bearer(token))
    assert resp.status == 200, await resp.text()
    return await resp.json()


def done_of(resp: Any) -> tuple[str, str]:
    """(path, done key) of a console POST's 303."""
    assert resp.status == 303, resp.status
    parts = urlsplit(resp.headers["Location"])
    return parts.path, parse_qs(parts.query).get("done", [""])[0]


async def test_no_session_goes_to_the_login_page_and_back(client: TestClient) -> None:
    """No hosted session → 303 to /ui/login with return_to; after the login, the page."""
    world = await make_world(client)
    await log_in_as(world, "org_admin")
    resp = await client.get("/ui/admin/users?email=t", allow_redirects=False)
    assert resp.status == 303
    assert resp.headers["Location"] == "/ui/login?return_to=%2Fui%2Fadmin%2Fusers%3Femail%3Dt"
    location = await sign_in(client, "/ui/admin/users?email=t", EMAILS["org_admin"])
    resp = await client.get(location)
    assert resp.status == 200 and "target@default.example" in await resp.text()


@pytest.mark.parametrize("role", ["viewer", "operator"])
async def test_viewer_and_operator_get_a_403_page(client: TestClient, role: str) -> None:
    world = await make_world(client)
    await console_as(world, role)
    for path in ("/ui/admin", "/ui/admin/users", "/ui/admin/audit.csv",
                 f"/ui/admin/users/{world.orgs['same'].target}"):  # fmt: skip
        resp = await client.get(path, allow_redirects=False)
        assert resp.status == 403, path
        assert resp.headers["Content-Type"].startswith("text/html")
    resp = await post(client, f"/ui/admin/users/{world.orgs['same'].target}/disabled",
                      {"disabled": "true"})  # fmt: skip
    assert resp.status == 403
    users = await api(client, world.tokens["superadmin"], f"/users/{world.orgs['same'].target}")
    assert users["disabled"] is False


async def test_page_headers_and_vendored_htmx(client: TestClient) -> None:
    """The hosted pages' headers on every console page; htmx served from here, cached long."""
    world = await make_world(client)
    await console_as(world, "org_admin")
    resp = await client.get("/ui/admin")
    assert resp.status == 200
    assert resp.headers["Cache-Control"] == "no-store"
    assert resp.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in resp.headers["Content-Security-Policy"]
    html = await resp.text()
    assert "https://" not in html.split("<body")[0]
    src = html.split('<script src="', 1)[1].split('"', 1)[0]
    body = (STATIC / "htmx.min.js").read_bytes()
    # linked with its content's version, so a year's cache never serves an old copy
    assert src == f"/ui/static/htmx.min.js?v={hashlib.sha256(body).hexdigest()[:12]}"
    resp = await client.get(src)
    assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/javascript")
    assert "max-age=31536000" in resp.headers["Cache-Control"]
    assert await resp.read() == body
    for name in ("secret.py", "README.md", "htmx.LICENSE", "..%2Fassets.py"):
        assert (await client.get(f"/ui/static/{name}")).status == 404, name


async def test_a_cross_origin_post_is_refused(client: TestClient) -> None:
    world = await make_world(client)
    token = await console_as(world, "org_admin")
    target = world.orgs["same"].target
    resp = await post(client, f"/ui/admin/users/{target}/disabled", {"disabled": "true"},
                      origin={"Origin": "https://evil.example"})  # fmt: skip
    assert resp.status == 403
    resp = await client.post(f"/ui/admin/users/{target}/disabled", data={"disabled": "true"},
                             headers=ORIGIN, allow_redirects=False)  # fmt: skip
    assert resp.status == 403  # no csrf_token
    assert (await api(client, token, f"/users/{target}"))["disabled"] is False


async def test_org_admin_manages_its_own_org_only(client: TestClient) -> None:
    """Every user action of an org_admin on a user of its org, checked over the API; another
    org's user, group or client is a 404 page and changes nothing."""
    world = await make_world(client)
    token = await console_as(world, "org_admin")
    same, other = world.orgs["same"], world.orgs["other"]

    resp = await client.get("/ui/admin/users", params={"email": "TARGET@"})
    html = await resp.text()
    assert "target@default.example" in html and "target@acme.example" not in html
    resp = await client.get("/ui/admin/users", params={"org_id": OTHER})
    assert resp.status == 404
    page = await (await client.get(f"/ui/admin/users/{same.target}")).text()
    assert "laptop" in page and "team-default" not in page  # its passkey; not a member
    for path in (f"/ui/admin/users/{other.target}", f"/ui/admin/groups/{other.group}",
                 f"/ui/admin/clients/{other.oauth_client}"):  # fmt: skip
        assert (await client.get(path)).status == 404, path
    for path, form in ((f"/ui/admin/users/{other.target}/disabled", {"disabled": "true"}),
                       (f"/ui/admin/users/{other.target}/delete", {}),
                       (f"/ui/admin/users/{other.target}/sessions/end", {}),
                       (f"/ui/admin/clients/{other.oauth_client}/secret", {}),
                       (f"/ui/admin/groups/{other.group}/delete", {})):  # fmt: skip
        assert (await post(client, path, form)).status == 404, path
    root = world.tokens["superadmin"]
    assert (await api(client, root, f"/users/{other.target}"))["disabled"] is False
    assert len((await api(client, root, f"/users/{other.target}/sessions"))["items"]) == 1

    # the user's own org: role, sessions (one, then all), MFA, passkey, disable, enable, delete
    assert done_of(await post(client, f"/ui/admin/users/{same.target}/role",
                              {"role": "operator"})) == (f"/ui/admin/users/{same.target}", "role")  # fmt: skip
    assert (await api(client, token, f"/users/{same.target}"))["role"] == "operator"
    resp = await post(client, f"/ui/admin/users/{same.target}/role", {"role": "superadmin"})
    assert resp.status == 403  # escalation refused by the policy
    await login(client, "target@default.example")  # a second session
    sessions = (await api(client, token, f"/users/{same.target}/sessions"))["items"]
    assert len(sessions) == 2
    html = await (await client.get(f"/ui/admin/users/{same.target}")).text()
    labels = re.findall(r'aria-label="(End the session[^"]*)"', html)
    assert len(labels) == 2 and labels[0] != labels[1]  # told apart by a screen reader
    resp = await post(client, f"/ui/admin/users/{same.target}/sessions/{sessions[0]['id']}/end")
    assert done_of(resp)[1] == "session"
    left = (await api(client, token, f"/users/{same.target}/sessions"))["items"]
    assert [s["id"] for s in left] == [sessions[1]["id"]]
    assert done_of(await post(client, f"/ui/admin/users/{same.target}/sessions/end"))[1] == (
        "sessions"
    )
    assert (await api(client, token, f"/users/{same.target}/sessions"))["items"] == []
    assert done_of(await post(client, f"/ui/admin/users/{same.target}/mfa/off"))[1] == "mfa"
    resp = await post(client, f"/ui/admin/users/{same.target}/passkeys/{same.passkey}/delete")
    assert done_of(resp)[1] == "passkey"
    assert (await api(client, token, f"/users/{same.target}/passkeys"))["items"] == []
    resp = await post(client, f"/ui/admin/users/{same.target}/disabled", {"disabled": "true"})
    assert done_of(resp)[1] == "disabled"
    assert (await api(client, token, f"/users/{same.target}"))["disabled"] is True
    resp = await post(client, f"/ui/admin/users/{same.target}/disabled", {"disabled": "false"})
    assert (await api(client, token, f"/users/{same.target}"))["disabled"] is False
    resp = await post(client, f"/ui/admin/users/{same.target}/delete")
    assert done_of(resp) == ("/ui/admin/users", "deleted")
    resp = await client.get(f"/users/{same.target}", headers=bearer(token))
    assert resp.status == 404
    # itself: the policy keeps an org_admin from disabling itself
    me = world.user_ids["org_admin"]
    assert (
        await post(client, f"/ui/admin/users/{me}/disabled", {"disabled": "true"})
    ).status == 403


async def test_groups_and_members(client: TestClient) -> None:
    world = await make_world(client)
    token = await console_as(world, "org_admin")
    same = world.orgs["same"]
    resp = await post(client, "/ui/admin/groups", {"name": "ops"})
    path, key = done_of(resp)
    group_id = path.rsplit("/", 1)[1]
    assert key == "group"
    assert (await api(client, token, f"/groups/{group_id}"))["org_id"] == HOME
    resp = await post(client, f"/ui/admin/groups/{group_id}/members",
                      {"user": "Target@Default.example"})  # fmt: skip
    assert done_of(resp)[1] == "member_added"
    members = (await api(client, token, f"/groups/{group_id}"))["members"]
    assert [m["id"] for m in members] == [same.target]
    resp = await post(client, f"/ui/admin/groups/{group_id}/members",
                      {"user": "target@acme.example"})  # fmt: skip
    assert resp.status == 404  # another org's user is not visible
    page = await (await client.get(f"/ui/admin/users/{same.target}")).text()
    assert ">ops</a>" in page
    resp = await post(client, f"/ui/admin/groups/{group_id}/members/{same.target}/remove")
    assert done_of(resp)[1] == "member_removed"
    assert (await api(client, token, f"/groups/{group_id}"))["members"] == []
    resp = await post(client, f"/ui/admin/groups/{group_id}/rename", {"name": "ops2"})
    assert (await api(client, token, f"/groups/{group_id}"))["name"] == "ops2"
    resp = await post(client, f"/ui/admin/groups/{group_id}/delete")
    assert done_of(resp) == ("/ui/admin/groups", "group_deleted")
    assert (await client.get(f"/groups/{group_id}", headers=bearer(token))).status == 404


async def test_oauth_clients(client: TestClient) -> None:
    """Register (the secret shown once, and it works), rotate, redirect URIs, disable, delete —
    each checked over the API. (``skip_consent`` is a superadmin's: ``test_oidc_tenants``.)"""
    world = await make_world(client)
    token = await console_as(world, "org_admin")
    form = {"name": "Portal", "scopes": "read", "grant_types__client_credentials": "on",
            "grant_types__authorization_code": "on",
            "redirect_uris": "https://portal.example/cb\n"}  # fmt: skip
    resp = await post(client, "/ui/admin/clients", form)
    path, key = done_of(resp)
    assert key == "client"
    client_id = path.rsplit("/", 1)[1]
    html = await (await client.get(path)).text()
    secret = re.search(r'id="client-secret">([^<]+)<', html)
    assert secret is not None
    assert "client-secret" not in await (await client.get(path)).text()  # once
    basic = base64.b64encode(f"{client_id}:{secret.group(1)}".encode()).decode()
    resp = await client.post("/oauth/token", data={"grant_type": "client_credentials"},
                             headers={"Authorization": f"Basic {basic}"})  # fmt: skip
    assert resp.status == 200, await resp.text()
    record = await api(client, token, f"/oauth/clients/{client_id}")
    assert record["org_id"] == HOME and record["skip_consent"] is False
    assert record["redirect_uris"] == ["https://portal.example/cb"]
    resp = await post(client, f"/ui/admin/clients/{client_id}/secret")
    assert done_of(resp)[1] == "rotated"
    html = await (await client.get(path)).text()
    rotated = re.search(r'id="client-secret">([^<]+)<', html)
    assert rotated is not None and rotated.group(1) != secret.group(1)
    assert (await api(client, token, f"/oauth/clients/{client_id}"))["secret_rotated_at"]
    resp = await post(client, f"/ui/admin/clients/{client_id}/edit",
                      {**form, "redirect_uris": "https://portal.example/a\nhttps://portal.example/b",
                       "token_endpoint_auth_method": "client_secret_basic"})  # fmt: skip
    assert done_of(resp)[1] == "client_updated"
    record = await api(client, token, f"/oauth/clients/{client_id}")
    assert record["redirect_uris"] == ["https://portal.example/a", "https://portal.example/b"]
    assert record["skip_consent"] is False
    assert 'name="backchannel_logout_uri"' in await (await client.get(path)).text()
    resp = await post(client, f"/ui/admin/clients/{client_id}/edit",
                      {**form, "backchannel_logout_uri": "https://portal.example/logout",
                       "backchannel_logout_session_required": "on"})  # fmt: skip
    record = await api(client, token, f"/oauth/clients/{client_id}")
    assert record["backchannel_logout_uri"] == "https://portal.example/logout"
    assert record["backchannel_logout_session_required"] is True
    resp = await post(client, f"/ui/admin/clients/{client_id}/edit",
                      {**form, "backchannel_logout_uri": "http://portal.example/logout"})  # fmt: skip
    assert resp.status == 422 and "backchannel_logout_uri" in await resp.text()
    resp = await post(client, f"/ui/admin/clients/{client_id}/update", {"disabled": "true"})
    assert (await api(client, token, f"/oauth/clients/{client_id}"))["disabled"] is True
    resp = await post(client, "/ui/admin/clients", {"name": "bad", "redirect_uris": "ftp://x",
                                                    "grant_types__authorization_code": "on"})  # fmt: skip
    assert resp.status == 422 and "redirect_uris" in await resp.text()
    resp = await post(client, f"/ui/admin/clients/{client_id}/delete")
    assert done_of(resp) == ("/ui/admin/clients", "client_deleted")
    resp = await client.get(f"/oauth/clients/{client_id}", headers=bearer(token))
    assert resp.status == 404


async def test_superadmin_acts_in_every_org(client: TestClient) -> None:
    world = await make_world(client)
    token = await console_as(world, "superadmin")
    other = world.orgs["other"]
    html = await (await client.get("/ui/admin/users", params={"email": "target@"})).text()
    assert "target@default.example" in html and "target@acme.example" in html
    html = await (await client.get("/ui/admin/users", params={"org_id": OTHER})).text()
    assert "target@acme.example" in html and "target@default.example" not in html
    assert (await client.get(f"/ui/admin/users/{other.target}")).status == 200
    resp = await post(client, f"/ui/admin/users/{other.target}/disabled", {"disabled": "true"})
    assert done_of(resp)[1] == "disabled"
    assert (await api(client, token, f"/users/{other.target}"))["disabled"] is True
    html = await (await client.get("/ui/admin/groups", params={"org_id": OTHER})).text()
    assert f'id="group-org" name="org_id" value="{OTHER}"' in html  # the filter's org
    resp = await post(client, "/ui/admin/groups", {"name": "acme-ops", "org_id": OTHER})
    group_id = done_of(resp)[0].rsplit("/", 1)[1]
    assert (await api(client, token, f"/groups/{group_id}"))["org_id"] == OTHER
    resp = await post(client, f"/ui/admin/clients/{other.oauth_client}/update",
                      {"disabled": "true"})  # fmt: skip
    assert (await api(client, token, f"/oauth/clients/{other.oauth_client}"))["disabled"]
    html = await (await client.get("/ui/admin")).text()
    assert 'id="keys"' in html and "RS256" in html


async def test_superadmin_moves_a_user_to_another_org(client: TestClient) -> None:
    """The move form (superadmin only) changes what PATCH /users/{id} ``org_id`` changes: the
    organization, and the memberships of the old organization's groups are gone."""
    world = await make_world(client)
    same = world.orgs["same"]
    await console_as(world, "org_admin")
    assert 'id="new-org"' not in await (await client.get(f"/ui/admin/users/{same.member}")).text()
    resp = await post(client, f"/ui/admin/users/{same.member}/org", {"org_id": OTHER})
    assert resp.status == 403
    root = world.tokens["superadmin"]
    assert (await api(client, root, f"/users/{same.member}"))["org_id"] == HOME

    await console_as(world, "superadmin")
    assert 'id="new-org"' in await (await client.get(f"/ui/admin/users/{same.member}")).text()
    resp = await post(client, f"/ui/admin/users/{same.member}/org", {"org_id": " acme"})
    assert resp.status == 422 and "org_id" in await resp.text()
    assert (await api(client, root, f"/users/{same.member}"))["org_id"] == HOME
    resp = await post(client, f"/ui/admin/users/{same.member}/org", {"org_id": OTHER})
    assert done_of(resp) == (f"/ui/admin/users/{same.member}", "moved")
    assert (await api(client, root, f"/users/{same.member}"))["org_id"] == OTHER
    assert (await api(client, root, f"/groups/{same.group}"))["members"] == []


async def test_deletes_ask_first_and_change_nothing_until_confirmed(client: TestClient) -> None:
    """GET of a delete's path is a confirmation page (its form POSTs there; nothing deleted);
    another organization's item is the 404 page, not a confirmation."""
    world = await make_world(client)
    token = await console_as(world, "org_admin")
    same, other = world.orgs["same"], world.orgs["other"]
    for path, api_path, shown in (
        (f"/ui/admin/users/{same.target}", f"/users/{same.target}", "target@default.example"),
        (f"/ui/admin/groups/{same.group}", f"/groups/{same.group}", f"team-{HOME}"),
        (f"/ui/admin/clients/{same.oauth_client}", f"/oauth/clients/{same.oauth_client}",
         f"svc-{HOME}"),
    ):  # fmt: skip
        detail = await (await client.get(path)).text()
        assert f'<form method="get" action="{path}/delete">' in detail
        resp = await client.get(f"{path}/delete")
        html = await resp.text()
        assert resp.status == 200 and shown in html and "cannot be undone" in html
        assert f'<form method="post" action="{path}/delete">' in html
        assert f'<a href="{path}">Cancel' in html
        await api(client, token, api_path)  # still there
    for path in (f"/ui/admin/users/{other.target}/delete", f"/ui/admin/groups/{other.group}/delete",
                 f"/ui/admin/clients/{other.oauth_client}/delete"):  # fmt: skip
        resp = await client.get(path)
        assert resp.status == 404 and "cannot be undone" not in await resp.text(), path


async def test_the_user_page_lists_identities_at_other_providers(client: TestClient) -> None:
    """Identities linked at other providers (docs/reference/federation.md) are on the user page, the
    provider's text escaped; an org_admin sees none of another organization's."""
    world = await make_world(client)
    same = world.orgs["same"]
    linked = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)
    async with world.container.storage().begin() as uow:
        await uow.identities.add(FederatedIdentity(
            "https://idp.example", "sub-<b>1</b>", "corp", same.target, "t@corp.example", linked
        ))  # fmt: skip
        await uow.commit()
    await console_as(world, "org_admin")
    html = await (await client.get(f"/ui/admin/users/{same.target}")).text()
    table = html.split('id="identities"')[1].split("</table>")[0]
    assert "corp" in table and "t@corp.example" in table and "2026-01-02 03:04" in table
    assert "sub-&lt;b&gt;1&lt;/b&gt;" in table and "<b>" not in table
    assert "1 other provider" in html
    other = await (await client.get(f"/ui/admin/users/{same.member}")).text()
    assert "None linked." in other


async def test_search_is_a_case_insensitive_prefix_and_pages(client: TestClient) -> None:
    world = await make_world(client)
    await console_as(world, "org_admin")
    for i in range(27):
        await add_user(client, f"Page{i:02d}@default.example")
    await add_user(client, "page-other@acme.example", Role.VIEWER, OTHER)
    resp = await client.get("/ui/admin/users", params={"email": "PAGE"})
    html = await resp.text()
    first = set(re.findall(r"page\d\d@default\.example", html))
    assert len(first) == 25 and "page-other" not in html
    cursor = re.search(r'rel="next" href="([^"]+)"', html)
    assert cursor is not None
    html = await (await client.get(cursor.group(1).replace("&amp;", "&"))).text()
    second = set(re.findall(r"page\d\d@default\.example", html))
    assert len(second) == 2 and not first & second
    html = await (await client.get("/ui/admin/users", params={"email": "%"})).text()
    assert "No user matches." in html  # no wildcard


async def test_audit_log_filters_and_csv(client: TestClient) -> None:
    world = await make_world(client)
    token = await console_as(world, "org_admin")
    same = world.orgs["same"]
    resp = await client.post("/login", json={"email": "target@default.example", "password": "x"})
    assert resp.status == 401
    html = await (await client.get("/ui/admin/audit", params={"type": "login.failed"})).text()
    assert "login.failed" in html and same.target in html
    resp = await client.get("/ui/admin/audit.csv", params={"user_id": same.target})
    assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(await resp.text())))
    assert rows[0] == ["id", "type", "occurred_at", "actor_id", "user_id", "org_id",
                       "client_address", "user_agent", "details"]  # fmt: skip
    api_rows = await api(client, token, f"/audit-events?user_id={same.target}&limit=200")
    assert [r[0] for r in rows[1:]] == [e["id"] for e in api_rows["items"]]
    assert all(r[5] == HOME for r in rows[1:])
    today = api_rows["items"][0]["occurred_at"][:10]
    resp = await client.get("/ui/admin/audit.csv", params={"to": "2000-01-01"})
    assert len(list(csv.reader(io.StringIO(await resp.text())))) == 1
    resp = await client.get("/ui/admin/audit.csv", params={"from": today, "to": today})
    assert len(list(csv.reader(io.StringIO(await resp.text())))) > 1
    assert (await client.get("/ui/admin/audit", params={"from": "yesterday"})).status == 422
    assert (await client.get("/ui/admin/audit.csv", params={"org_id": OTHER})).status == 404


async def test_dashboard_counts(client: TestClient) -> None:
    world = await make_world(client)
    await console_as(world, "org_admin")
    await client.post("/login", json={"email": "target@default.example", "password": "x"})
    html = await (await client.get("/ui/admin")).text()
    assert 'id="keys"' not in html  # signing keys: superadmin only
    users = int(re.search(r'id="stat-users">(\d+)<', html).group(1))  # type: ignore[union-attr]
    assert users == 4  # root, target, member, org_admin of default
    failures = re.search(r'id="stat-failures">(\d+)<', html)
    assert failures is not None and int(failures.group(1)) == 1
    logins = re.search(r'id="stat-logins">(\d+)<', html)
    assert logins is not None and int(logins.group(1)) >= 3
    sessions = re.search(r'id="stat-sessions">(\d+)<', html)
    assert sessions is not None and int(sessions.group(1)) >= 3


@pytest.mark.parametrize("malformed", ["%00", "not-an-id", "0" * 32, "%E2%98%83", "x" * 300])
async def test_malformed_ids_on_every_console_route_are_404_pages(
    client: TestClient, malformed: str
) -> None:
    """Ids are opaque (docs/reference/operations.md): on every console route with an id, a malformed
    or unknown one is the 404 page for a superadmin (never a 500), the 403 page for a viewer."""
    from entrypoints.http.console.routes import ROUTES

    world = await make_world(client)
    routes = [r for r in ROUTES if "{id}" in r.path]
    assert len(routes) == 25  # + resend and revoke an invitation
    for role, status in (("superadmin", 404), ("viewer", 403)):
        await console_as(world, role)
        for spec in routes:
            path = re.sub(r"\{\w+\}", malformed, spec.path)
            if spec.method == "GET":
                resp = await client.get(path, allow_redirects=False)
            else:
                form = {"disabled": "true", "name": "x", "user": "x", "role": "viewer",
                        "org_id": "acme"}  # fmt: skip
                resp = await post(client, path, form)
            assert resp.status == status, f"{role} {spec.method} {spec.path}: {resp.status}"
            assert resp.headers["Content-Type"].startswith("text/html")
