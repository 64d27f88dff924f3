"""The hosted pages of sign-out (docs/reference/oauth-and-oidc.md): the confirmation that
RP-initiated logout (``/oauth/logout``) shows when it cannot end the session by itself, its
form, and the signed-out page."""

from __future__ import annotations

from aiohttp import web

from entrypoints.http.forward_auth import clear_forward_auth_cookie
from entrypoints.http.keys import CONTAINER
from entrypoints.http.oidc import signed_out
from entrypoints.http.pages.web import (
    clear_cookie,
    csrf_ok,
    csrf_refused,
    page,
    read_page_form,
    see_other,
    session_cookie,
)
from entrypoints.http.routing import RouteSpec

__all__ = ["ROUTES"]

_HTML = "HTML page"
_FORM = "application/x-www-form-urlencoded"
_FORM_ANY = {"type": "object", "properties": {}}


async def confirm_logout(request: web.Request) -> web.Response:
    """POST /ui/logout (the confirmation page's form, CSRF-checked) → 303 /ui/signed-out."""
    form = await read_page_form(request)
    if form is None or not csrf_ok(request, form):
        return csrf_refused(request)
    await request.app[CONTAINER].hosted_login().logout(session_cookie(request), None)
    response = see_other(request, "/ui/signed-out")
    clear_cookie(response, request, "session")
    clear_forward_auth_cookie(response, request)
    return response


async def logout_page(request: web.Request) -> web.Response:
    """GET /ui/logout → the confirmation page."""
    return page(request, "logout.html", {})


async def signed_out_page(request: web.Request) -> web.Response:
    """GET /ui/signed-out → the signed-out page."""
    return page(request, "message.html", signed_out())


ROUTES = [
    RouteSpec(
        "GET",
        "/ui/logout",
        logout_page,
        "The sign-out confirmation page",
        {200: _HTML},
        tag="ui",
        page=True,
    ),
    RouteSpec(
        "POST",
        "/ui/logout",
        confirm_logout,
        "Sign out (the confirmation page's form)",
        {303: "See other: the signed-out page", 403: _HTML},
        request=_FORM_ANY,
        media_type=_FORM,
        tag="ui",
        page=True,
    ),
    RouteSpec(
        "GET",
        "/ui/signed-out",
        signed_out_page,
        "The signed-out page",
        {200: _HTML},
        tag="ui",
        page=True,
    ),
]
"""The sign-out pages."""
