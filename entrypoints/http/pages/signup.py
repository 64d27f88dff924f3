"""The sign-up page (docs/guides/self-service.md; ADR 0042): ``/ui/register`` and the
"check your email" page after it; the verification link's sign-in is ``pages.recovery``'s
``/ui/verify`` calling ``SignUp.verify`` with the cookie this page sets.

``GET /ui/register?return_to=<path>`` shows the form (email, password, password again) with the
password rules of docs/reference/tokens-and-sessions.md as hint text and as the inputs'
``minlength``; ``POST /ui/register`` checks CSRF, then the two passwords, then calls
``SignUp.sign_up`` (``AuthService.register``: the same rules, answers and verification mail as
``POST /register``; the anonymous write bucket of docs/reference/operations.md limits it like
``POST /register``). An error shows the form again with the email kept and the passwords not.
On success: signed in and 303 to ``return_to`` (default ``/ui/account``); with
``auth.require_verified_email``, 303 to ``/ui/register/check-mail`` with the sign-up proof and
``return_to`` kept in cookies for as long as the verification link lives. With
``auth.allow_registration`` off, both answer 403 with a page saying sign-up is closed.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from domain.errors import (
    EmailTaken,
    RegistrationClosed,
    StorageFault,
    ValidationFailed,
)
from domain.model import BCRYPT_MAX_PASSWORD_BYTES
from entrypoints.http.keys import CONTAINER
from entrypoints.http.language import page_locale
from entrypoints.http.oidc import client_of
from entrypoints.http.pages.web import (
    csrf_ok,
    csrf_refused,
    page,
    read_page_form,
    safe_return_to,
    see_other,
    session_cookie,
    set_cookie,
)
from entrypoints.http.requests import client_address, user_agent
from entrypoints.http.routing import RouteSpec

PROOF_COOKIE = "signup"
"""The cookie (``authsvc_signup``) holding the sign-up proof until the verification link."""
RETURN_COOKIE = "signup_return_to"
"""The cookie (``authsvc_signup_return_to``) keeping where the sign-up was heading."""
DEFAULT_RETURN_TO = "/ui/account"
_MAX_EMAIL = 320


def return_to_of(value: str | None) -> str:
    """``value`` when it is a safe path of this service (``safe_return_to``), else the account
    page."""
    return safe_return_to(value) or DEFAULT_RETURN_TO


def registration_open(request: web.Request) -> bool:
    """``auth.allow_registration`` in force."""
    return bool(request.app[CONTAINER].auth_settings().current.allow_registration)


def register_url(request: web.Request, return_to: str) -> str | None:
    """The "Create account" link of the login page, carrying ``return_to``; None when sign-up
    is closed."""
    if not registration_open(request):
        return None
    return "/ui/register?" + urlencode({"return_to": return_to})


def _form(request: web.Request, return_to: str, email: str = "", error: str | None = None,
          status: int = 200) -> web.Response:  # fmt: skip
    """The form; ``error`` names the message the template shows (``mismatch``, ``too_short``,
    ``too_long``, ``email``, ``taken``)."""
    auth = request.app[CONTAINER].auth_settings().current
    context: dict[str, Any] = {
        "return_to": return_to,
        "email": email[:_MAX_EMAIL],
        "error": error,
        "min_length": auth.password_min_length,
        "max_bytes": BCRYPT_MAX_PASSWORD_BYTES,
        "sign_in": "/ui/login?" + urlencode({"return_to": return_to}),
        "forgot": "/ui/forgot?" + urlencode({"return_to": return_to}),
    }
    return page(request, "register.html", context, status=status)


def _closed(request: web.Request, return_to: str) -> web.Response:
    """403: sign-up is closed (``auth.allow_registration`` false)."""
    context = {"closed": True, "sign_in": "/ui/login?" + urlencode({"return_to": return_to})}
    return page(request, "register.html", context, status=403)


async def register_page(request: web.Request) -> web.Response:
    """GET /ui/register?return_to=<path> → the sign-up form; 403 page when sign-up is
    closed."""
    return_to = return_to_of(request.query.get("return_to"))
    if not registration_open(request):
        return _closed(request, return_to)
    return _form(request, return_to)


def _policy_error(error: ValidationFailed, password: str, min_length: int) -> str:
    if any(e.field == "email" for e in error.errors):
        return "email"
    return "too_short" if len(password) < min_length else "too_long"


async def register(request: web.Request) -> web.Response:
    """POST /ui/register ``email``, ``password``, ``password_again``, ``csrf_token``,
    ``return_to`` → 303 to ``return_to`` signed in, or 303 to /ui/register/check-mail with
    ``auth.require_verified_email``; the form again (email kept) with 422 for two different
    passwords, a password the policy refuses or a malformed email, 409 for an email that has an
    account (as ``POST /register`` answers); 403 when sign-up is closed or on a CSRF failure.
    Nothing is written on any error."""
    form = await read_page_form(request)
    if form is None or not csrf_ok(request, form):
        return csrf_refused(request)
    container = request.app[CONTAINER]
    return_to = return_to_of(form.get("return_to"))
    email, password = form.get("email", ""), form.get("password", "")
    if not registration_open(request):
        return _closed(request, return_to)
    if password != form.get("password_again", ""):
        return _form(request, return_to, email, "mismatch", 422)
    address = client_address(request, container.config().server.trusted_proxies)
    try:
        done = await container.sign_up().sign_up(
            email, password, address, user_agent(request), client_of(return_to),
            previous=session_cookie(request), locale=page_locale(request, return_to),
        )  # fmt: skip
    except RegistrationClosed:
        return _closed(request, return_to)
    except ValidationFailed as e:
        min_length = container.auth_settings().current.password_min_length
        return _form(request, return_to, email, _policy_error(e, password, min_length), 422)
    except EmailTaken:
        return _form(request, return_to, email, "taken", 409)
    except StorageFault:
        raise  # no refusal: the problem middleware's 503
    if done.session is not None:
        response = see_other(request, return_to)
        set_cookie(response, request, "session", done.session)
        return response
    response = see_other(request, "/ui/register/check-mail")
    ttl = container.auth_settings().current.email_verification_ttl
    set_cookie(response, request, PROOF_COOKIE, done.proof or "", max_age=ttl)
    set_cookie(response, request, RETURN_COOKIE, return_to, max_age=ttl)
    return response


async def check_mail_page(request: web.Request) -> web.Response:
    """GET /ui/register/check-mail → "check your email": the link in the mail confirms the
    address and, opened in this browser, signs in and goes on."""
    ttl = request.app[CONTAINER].auth_settings().current.email_verification_ttl
    context = {"hours": ttl // 3600} if ttl >= 3600 else {"minutes": max(1, ttl // 60)}
    return page(request, "check_mail.html", context)


_HTML = "HTML page"
_RETURN_TO = (
    {"name": "return_to", "in": "query", "required": False, "schema": {"type": "string"}},
)

ROUTES = [
    RouteSpec("GET", "/ui/register", register_page, "The sign-up page",
              {200: _HTML, 403: _HTML}, parameters=_RETURN_TO, tag="ui", page=True),
    RouteSpec("POST", "/ui/register", register, "Create an account (the sign-up form)",
              {303: "See other (303)", 403: _HTML, 409: _HTML, 422: _HTML},
              request={"type": "object", "properties": {}},
              media_type="application/x-www-form-urlencoded", tag="ui", page=True),
    RouteSpec("GET", "/ui/register/check-mail", check_mail_page, "The check-your-email page",
              {200: _HTML}, tag="ui", page=True),
]  # fmt: skip
"""The sign-up pages of docs/guides/self-service.md."""
