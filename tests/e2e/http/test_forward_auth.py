"""``/forward-auth`` over HTTP (docs/reference/forward-auth.md): what a reverse proxy is told for a
browser with the protected hosts' cookie, a bearer token, or neither; the login that comes back to
a listed host through ``/ui/forward-auth``; the rules of ``[[forward_auth.rules]]`` (first match
decides, paths normalized, fail closed without a trusted proxy); the session's end ending access.

Requests come from 127.0.0.1, the trusted proxy of the configuration (nginx and Caddy themselves
are ``tests/e2e/browser/test_forward_auth_proxies.py``)."""

from __future__ import annotations

import html
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from aiohttp.test_utils import TestClient

from tests.e2e.conftest import MakeClient
from tests.e2e.helpers import ONE_PER_BACKEND, PASSWORD, bearer
from tests.e2e.oidc_helpers import ORIGIN, csrf_of, register_user, sign_in

APP = "app.test:8443"
ISSUER = "http://localhost:8080"
CONFIG = """
[server]
trusted_proxies = [{trusted}]
[forward_auth]
hosts = ["{app}"]
[[forward_auth.rules]]
host = "{app}"
path_prefix = "/admin"
groups = ["ops"]
[[forward_auth.rules]]
host = "{app}"
path_prefix = "/staff/"
roles = ["org_admin", "superadmin"]
"""


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


def _config(tmp_path: Path, trusted: str = '"127.0.0.1"') -> str:
    path = tmp_path / "authsvc.toml"
    path.write_text(CONFIG.format(app=APP, trusted=trusted), "utf-8")
    return str(path)


@pytest.fixture
async def client(make_client: MakeClient, tmp_path: Path) -> TestClient:
    return await make_client(config_path=_config(tmp_path))


def forwarded(uri: str = "/", host: str = APP) -> dict[str, str]:
    """The headers nginx, Traefik and Caddy send about the request they ask for."""
    return {"X-Forwarded-Method": "GET", "X-Forwarded-Proto": "https",
            "X-Forwarded-Host": host, "X-Forwarded-Uri": uri}  # fmt: skip


async def browser_login(client: TestClient, uri: str = "/wiki?page=1") -> str:
    """The browser's walk: sent to the login page with an absolute return_to, signed in, through
    /ui/forward-auth back to the app; returns the protected hosts' cookie."""
    resp = await client.get("/forward-auth?redirect=1", headers=forwarded(uri),
                            allow_redirects=False)  # fmt: skip
    assert resp.status == 302, await resp.text()
    login = urlsplit(resp.headers["Location"])
    target = parse_qs(login.query)["return_to"][0]
    assert target == f"https://{APP}{uri}"
    page = await client.get(login.path, params={"return_to": target})
    assert page.status == 200
    back = "/ui/forward-auth?" + urlencode({"rd": target})
    assert f'value="{html.escape(back)}"' in await page.text()
    location = await sign_in(client, back)
    assert location == back
    resp = await client.get(location, allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"] == target
    cookie = resp.cookies["authsvc_forward_auth"]
    assert cookie["httponly"] and cookie["samesite"] == "Lax" and not cookie["domain"]
    return cookie.value


async def check(client: TestClient, cookie: str | None, uri: str = "/") -> object:
    cookies = {} if cookie is None else {"Cookie": f"authsvc_forward_auth={cookie}"}
    return await client.get("/forward-auth", headers={**forwarded(uri), **cookies},
                            allow_redirects=False)  # fmt: skip


async def test_no_session_is_401_or_a_redirect_to_the_login_for_a_listed_host(
    client: TestClient,
) -> None:
    """nginx: 401 with the login page in ``Location``; Traefik/Caddy (redirect=1): 302 there; an
    unlisted host or no forwarded request: 401 and no address to go to."""
    login = f"{ISSUER}/ui/login?return_to=https%3A%2F%2Fapp.test%3A8443%2Fdocs%3Fq%3D1"
    resp = await client.get("/forward-auth", headers=forwarded("/docs?q=1"))
    assert resp.status == 401 and resp.headers["Location"] == login
    assert resp.headers["WWW-Authenticate"].startswith("Bearer")
    assert (await resp.json())["code"] == "invalid_token"
    resp = await client.get("/forward-auth?redirect=1", headers=forwarded("/docs?q=1"),
                            allow_redirects=False)  # fmt: skip
    assert resp.status == 302 and resp.headers["Location"] == login
    for headers in (forwarded(host="evil.test"), {}):
        resp = await client.get("/forward-auth?redirect=1", headers=headers)
        assert resp.status == 401 and "Location" not in resp.headers


async def test_a_browser_signs_in_and_passes_with_its_headers(client: TestClient) -> None:
    user_id = await register_user(client)
    cookie = await browser_login(client)
    resp = await check(client, cookie, "/wiki")
    assert resp.status == 200, await resp.text()  # type: ignore[attr-defined]
    headers = resp.headers  # type: ignore[attr-defined]
    assert (headers["X-Auth-User-Id"], headers["X-Auth-Email"], headers["X-Auth-Role"],
            headers["X-Auth-Org"], headers["X-Auth-Groups"]) == (
        user_id, "alice@example.com", "viewer", "default", "")  # fmt: skip
    assert headers["Cache-Control"] == "no-store"


async def test_the_cookie_and_the_hosted_session_are_not_interchangeable(
    client: TestClient,
) -> None:
    """Every app behind the proxy sees the protected hosts' cookie: it does not open the
    account pages, and the hosted session's cookie does not pass forward auth."""
    await register_user(client)
    cookie = await browser_login(client)
    hosted = next(c.value for c in client.session.cookie_jar if c.key == "authsvc_session")
    client.session.cookie_jar.clear()
    resp = await client.get("/ui/account", headers={"Cookie": f"authsvc_session={cookie}"},
                            allow_redirects=False)  # fmt: skip
    assert resp.status in (302, 303) and "/ui/login" in resp.headers["Location"]
    assert (await check(client, hosted)).status == 401  # type: ignore[attr-defined]


async def test_a_bearer_token_passes_with_group_names(client: TestClient) -> None:
    """An API caller with a bearer token passes too; ``X-Auth-Groups`` names the groups."""
    from tests.e2e.http.test_actuator_http import superadmin_token

    user_id = await register_user(client)
    root = await superadmin_token(client)
    for name in ("ops", "writers"):
        group = await client.post("/groups", json={"name": name}, headers=bearer(root))
        group_id = (await group.json())["id"]
        put = await client.put(f"/groups/{group_id}/members/{user_id}", headers=bearer(root))
        assert put.status in (200, 204), await put.text()
    pair = await client.post("/login", json={"email": "alice@example.com", "password": PASSWORD})
    token = (await pair.json())["access_token"]
    resp = await client.get("/forward-auth", headers={**forwarded("/admin"), **bearer(token)})
    assert resp.status == 200 and resp.headers["X-Auth-Groups"] == "ops,writers"
    resp = await client.get("/forward-auth", headers={**forwarded(), **bearer("not.a.token")})
    assert resp.status == 401


PATHS = [
    ("/admin", 403), ("/admin/users?x=1", 403), ("/public/../admin/x", 403),
    ("/public/%2e%2e/admin", 403), ("//admin", 403), ("/%61dmin", 403), ("/administrator", 200),
    ("/", 200), ("/staff/", 403), ("/staff", 403), ("/staffing", 200),
]  # fmt: skip
"""(X-Forwarded-Uri, status) for a viewer outside group ``ops``."""


async def test_rules_refuse_a_user_without_the_group_on_every_spelling_of_the_path(
    client: TestClient,
) -> None:
    """The first matching rule decides: ``/admin`` needs group ``ops``, ``/staff/`` a role of
    org_admin or above; no rule → any signed-in user; dot segments, escapes and doubled slashes
    are resolved before matching."""
    await register_user(client)
    cookie = await browser_login(client)
    for uri, status in PATHS:
        resp = await check(client, cookie, uri)
        assert resp.status == status, uri  # type: ignore[attr-defined]
        if status == 403:
            assert (await resp.json())["code"] == "forbidden"  # type: ignore[attr-defined]


async def test_rules_without_a_trusted_proxy_refuse_everyone(
    make_client: MakeClient, tmp_path: Path
) -> None:
    """Requests not from ``server.trusted_proxies``: their X-Forwarded-* are not believed, so no
    rule can be checked and nobody passes (fail closed) — a bearer of a valid token included."""
    from tests.e2e.oidc_helpers import register_user as register

    client = await make_client(config_path=_config(tmp_path, trusted='"10.9.9.9"'))
    await register(client)
    pair = await client.post("/login", json={"email": "alice@example.com", "password": PASSWORD})
    token = (await pair.json())["access_token"]
    resp = await client.get("/forward-auth", headers={**forwarded("/"), **bearer(token)})
    assert resp.status == 403


async def test_logout_and_disabling_end_access(client: TestClient) -> None:
    from tests.e2e.http.test_actuator_http import superadmin_token

    user_id = await register_user(client)
    cookie = await browser_login(client)
    assert (await check(client, cookie)).status == 200  # type: ignore[attr-defined]
    resp = await client.post("/ui/logout", data={"csrf_token": csrf_of(client)}, headers=ORIGIN,
                             allow_redirects=False)  # fmt: skip
    assert resp.status == 303
    assert resp.cookies["authsvc_forward_auth"].value == ""
    assert (await check(client, cookie)).status == 401  # type: ignore[attr-defined]
    cookie = await browser_login(client)
    root = await superadmin_token(client)
    resp = await client.patch(f"/users/{user_id}", json={"disabled": True}, headers=bearer(root))
    assert resp.status == 200, await resp.text()
    assert (await check(client, cookie)).status == 401  # type: ignore[attr-defined]


async def test_a_signed_in_browser_goes_straight_back_and_start_refuses_other_hosts(
    client: TestClient,
) -> None:
    await register_user(client)
    await browser_login(client)
    target = f"https://{APP}/other"
    resp = await client.get("/ui/login", params={"return_to": target}, allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"].startswith("/ui/forward-auth?rd=")
    resp = await client.get(resp.headers["Location"], allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"] == target
    for rd in ("https://evil.test/", "javascript:alert(1)", "//app.test:8443/", "/ui/account"):
        resp = await client.get("/ui/forward-auth", params={"rd": rd}, allow_redirects=False)
        assert resp.status == 400, rd
    page = await client.get("/ui/login", params={"return_to": "https://evil.test/x"})
    assert 'value="/ui/signed-in"' in await page.text()


async def test_start_without_a_session_goes_to_the_login_and_writes_nothing(
    client: TestClient,
) -> None:
    rd = f"https://{APP}/"
    resp = await client.get("/ui/forward-auth", params={"rd": rd}, allow_redirects=False)
    assert resp.status == 303
    location = urlsplit(resp.headers["Location"])
    assert location.path == "/ui/login"
    assert parse_qs(location.query)["return_to"] == ["/ui/forward-auth?" + urlencode({"rd": rd})]
    assert "authsvc_forward_auth" not in resp.cookies
