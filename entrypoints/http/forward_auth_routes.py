"""``/forward-auth`` for reverse proxies (docs/reference/forward-auth.md): nginx ``auth_request``,
Traefik ForwardAuth and Caddy ``forward_auth`` ask it whether a request may pass; and
``/ui/forward-auth``, where a login from a protected host sets that host's cookie."""

from __future__ import annotations

from urllib.parse import urlencode

from aiohttp import web

from application.forward_auth.check import Passed
from domain.errors import Forbidden, InvalidToken
from domain.forward_auth import ForwardedRequest
from domain.texts import Text
from entrypoints.http.forward_auth import (
    START_PATH,
    forward_auth_cookie,
    forwarded_request,
    listed_url,
    set_forward_auth_cookie,
)
from entrypoints.http.keys import CONTAINER
from entrypoints.http.pages.web import PAGE_HEADERS, error_page, issuer_of, session_cookie
from entrypoints.http.problems import problem_response
from entrypoints.http.routing import RouteSpec

__all__ = ["ROUTES"]

_NO_STORE = {"Cache-Control": "no-store"}


def _bearer(request: web.Request) -> str | None:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def _passed(passed: Passed) -> web.Response:
    return web.Response(status=200, headers={
        **_NO_STORE,
        "X-Auth-User-Id": passed.user_id,
        "X-Auth-Email": passed.email,
        "X-Auth-Role": passed.role,
        "X-Auth-Org": passed.org_id,
        "X-Auth-Groups": ",".join(passed.groups),
    })  # fmt: skip


def _login_url(request: web.Request, target: ForwardedRequest | None) -> str | None:
    """The login page that comes back to ``target`` (a listed host only), or None."""
    url = None if target is None else listed_url(request, target.url)
    if url is None:
        return None
    return f"{issuer_of(request).rstrip('/')}/ui/login?{urlencode({'return_to': url})}"


def _unauthenticated(request: web.Request, target: ForwardedRequest | None) -> web.Response:
    """401 (with ``Location``: the login page, for nginx's ``auth_request_set``), or 302 to the
    login page with ``?redirect=1`` (Traefik, Caddy)."""
    login = _login_url(request, target)
    if login is not None and request.query.get("redirect") == "1":
        return web.Response(status=302, headers={**_NO_STORE, "Location": login})
    headers = {**_NO_STORE, "WWW-Authenticate": 'Bearer realm="authsvc"'}
    if login is not None:
        headers["Location"] = login
    return problem_response(401, "invalid_token", "sign in first", headers=headers)


async def forward_auth(request: web.Request) -> web.Response:
    """GET /forward-auth[?redirect=1] → 200 with ``X-Auth-User-Id``, ``X-Auth-Email``,
    ``X-Auth-Role``, ``X-Auth-Org``, ``X-Auth-Groups`` for the protected hosts' cookie or a
    bearer access token; 401 without either (302 to the login page with ``redirect=1`` and a
    trusted proxy's ``X-Forwarded-*`` naming a listed host); 403 when a rule refuses."""
    container = request.app[CONTAINER]
    target = forwarded_request(request)
    cookie = request.cookies.get(forward_auth_cookie(request))
    try:
        passed = await container.forward_auth().check(cookie, _bearer(request), target)
    except InvalidToken:
        return _unauthenticated(request, target)
    except Forbidden:
        return problem_response(403, "forbidden", "a forward_auth rule refuses this user",
                                headers=_NO_STORE)  # fmt: skip
    return _passed(passed)


async def start(request: web.Request) -> web.Response:
    """GET /ui/forward-auth?rd=<absolute URL of a listed host> → 303 to ``rd`` with the
    protected hosts' cookie for the browser's hosted session; 303 to the login page (which
    comes back here) when not signed in; 400 page for any other ``rd``."""
    url = listed_url(request, request.query.get("rd"))
    if url is None:
        return error_page(request, Text("This address is not one to return to."))
    cookie = await request.app[CONTAINER].forward_auth().start(session_cookie(request))
    if cookie is None:
        back = f"{START_PATH}?{urlencode({'rd': url})}"
        return web.Response(status=303, headers={
            **PAGE_HEADERS, "Location": "/ui/login?" + urlencode({"return_to": back})
        })  # fmt: skip
    response = web.Response(status=303, headers={**PAGE_HEADERS, "Location": url})
    set_forward_auth_cookie(response, request, cookie)
    return response


_HEADERS_DOC = ("signed in: X-Auth-User-Id, X-Auth-Email, X-Auth-Role, X-Auth-Org, "
                "X-Auth-Groups (comma-separated group names)")  # fmt: skip
_REDIRECT = {"name": "redirect", "in": "query", "required": False,
             "schema": {"type": "string"},
             "description": "1: 302 to the login page instead of 401 (Traefik, Caddy)"}  # fmt: skip
_RD = {"name": "rd", "in": "query", "required": True, "schema": {"type": "string"},
       "description": "absolute URL on a host of forward_auth.hosts"}  # fmt: skip

ROUTES = [
    RouteSpec(
        "GET",
        "/forward-auth",
        forward_auth,
        "Forward auth: may this request pass the proxy?",
        {
            200: _HEADERS_DOC,
            302: "to the login page (redirect=1)",
            401: "not signed in (Location: the login page for a listed host)",
            403: "a forward_auth rule refuses",
        },
        parameters=(_REDIRECT,),
        tag="forward-auth",
    ),
    RouteSpec(
        "GET",
        START_PATH,
        start,
        "Forward auth: set the protected hosts' cookie, go back",
        {303: "to rd with the cookie, or to the login page"},
        parameters=(_RD,),
        tag="forward-auth",
        page=True,
    ),
]
