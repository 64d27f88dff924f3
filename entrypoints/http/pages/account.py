"""The account page's overview ``/ui/account`` (docs/reference/accounts.md, "The account pages"):
who is signed in, whether the email is verified (with "Send the link again", the JSON API's
``POST /me/email/verify``), the identities at other providers (link and unlink:
``entrypoints.http.pages.federation``), the security summary, and the navigation to the
sessions (``account_sessions``) and connected apps (``account_apps``) pages.

Every account page needs the hosted session (else 303 to /ui/login and back); every POST is
CSRF-checked (``csrf_ok``) and answers 303, or the page again with a message (the same use
cases, throttles and audit rows as the JSON API).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from domain.errors import RateLimited
from domain.model import User
from domain.oidc import HostedSession
from domain.policy import Principal
from entrypoints.http.keys import CONTAINER
from entrypoints.http.language import page_locale
from entrypoints.http.pages.web import (
    csrf_ok,
    csrf_refused,
    page,
    read_page_form,
    see_other,
    session_cookie,
)
from entrypoints.http.requests import client_address
from entrypoints.http.routing import RouteSpec

__all__ = ["ROUTES", "account_user", "login_first", "principal_of", "render_account"]

NOTICES = frozenset({"verification_sent"})
"""``?done=`` values the overview words after a POST (any other is ignored)."""


async def account_user(request: web.Request) -> tuple[User, HostedSession] | None:
    """The signed-in user of the request's hosted session and that session (its
    ``session_id`` is "this session" of the sessions list), or None (no, an ended or an
    expired session; a user gone or disabled). The view counts as a use of the session: its
    idle end and its "last used" move on (``HostedPageCaller``)."""
    found = await request.app[CONTAINER].account_caller()(session_cookie(request))
    return None if found is None else (found[1], found[0])


def login_first(request: web.Request, back: str) -> web.Response:
    """303 to the login page, which comes back to ``back`` (a path of the account pages)."""
    return see_other(request, "/ui/login?" + urlencode({"return_to": back}))


async def account_page(request: web.Request) -> web.Response:
    """GET /ui/account[?done=verification_sent] → the overview (200); 303 to /ui/login
    without a hosted session."""
    done = request.query.get("done")
    return await render_account(request, notice=done if done in NOTICES else None)


async def render_account(request: web.Request, error: str | None = None,
                         status: int = 200, notice: str | None = None,
                         retry_after: int | None = None) -> web.Response:  # fmt: skip
    """The overview answered with ``status``, showing ``notice`` (of ``NOTICES``) or ``error``,
    named for the template that words it: ``too_many`` (the resend throttle; ``retry_after``
    seconds to wait), ``last_login_method`` (unlinking the last way to sign in) or
    ``nothing_to_unlink``; 303 to /ui/login without a hosted session."""
    container = request.app[CONTAINER]
    found = await account_user(request)
    if found is None:
        return login_first(request, "/ui/account")
    user = found[0]
    linked = await container.own_identities().list(user.id)
    settings = container.federation_settings().current
    names = {p.id: p.name for p in settings.providers}
    mine = {i.provider for i in linked}
    context: dict[str, Any] = {
        "here": "overview", "email": user.email, "email_verified": user.email_verified,
        "mfa_enabled": user.mfa_enabled, "passkeys": user.passkeys,
        "identities": [{"provider": i.provider, "name": names.get(i.provider, i.provider),
                        "email": i.email or "", "linked_at": i.linked_at,
                        "last_used_at": i.last_used_at} for i in linked],
        "linkable": [{"name": p.name, "id": p.id} for p in settings.enabled()
                     if p.id not in mine],
        "error": error, "notice": notice, "retry_after": retry_after,
    }  # fmt: skip
    return page(request, "account.html", context, status=status)


async def resend_verification(request: web.Request) -> web.Response:
    """POST /ui/account/email/verify ``csrf_token`` → 303 to /ui/account?done=verification_sent
    (a new link is mailed while the email is unverified: ``POST /me/email/verify``'s use case and
    throttle); 429 the overview with a message and ``Retry-After`` when throttled; 403 on a CSRF
    failure; 303 to /ui/login without a hosted session."""
    form = await read_page_form(request)
    if form is None or not csrf_ok(request, form):
        return csrf_refused(request)
    container = request.app[CONTAINER]
    found = await account_user(request)
    if found is None:
        return login_first(request, "/ui/account")
    address = client_address(request, container.config().server.trusted_proxies)
    try:
        await container.email_verification().resend(found[0], address, locale=page_locale(request))
    except RateLimited as e:
        response = await render_account(request, "too_many", 429, retry_after=e.retry_after)
        response.headers["Retry-After"] = str(e.retry_after)
        return response
    return see_other(request, "/ui/account?done=verification_sent")


def principal_of(found: tuple[User, HostedSession]) -> Principal:
    """The use cases' caller for the signed-in user (loaded afresh with the session, as a bearer
    caller is)."""
    return Principal.of(found[0])


_HTML = "HTML page"
_FORM = {"type": "object", "properties": {}}

ROUTES = [
    RouteSpec("GET", "/ui/account", account_page, "The signed-in user's account page",
              {200: _HTML, 303: "See other (303)"},
              parameters=({"name": "done", "in": "query", "required": False,
                           "schema": {"type": "string"}},),
              tag="ui", page=True),
    RouteSpec("POST", "/ui/account/email/verify", resend_verification,
              "Send the email verification link again",
              {303: "See other (303)", 403: _HTML, 429: _HTML}, request=_FORM,
              media_type="application/x-www-form-urlencoded", tag="ui", page=True),
]  # fmt: skip
"""The account overview's routes (docs/reference/accounts.md)."""
