"""The hosted recovery pages (docs/reference/accounts.md and docs/reference/oauth-and-oidc.md):
``/ui/forgot`` (ask for a reset link), ``/ui/reset`` (set a new password with the link's token),
``/ui/verify`` (confirm the email address with the link's token). They call the JSON API's use cases
(``PasswordRecovery.forgot`` / ``reset``, ``EmailVerification.verify``): the same throttle, tokens,
audit and enumeration promise (``/ui/forgot`` answers alike for a known and an unknown email).

Every POST is CSRF-checked and answers 303 on success. The sign-in interaction survives the
detour: ``/ui/forgot`` takes ``return_to`` (from its query, or from the login page that linked
to it, read from the same-origin ``Referer``), keeps it in the ``authsvc_return_to`` cookie for
as long as a reset link lives, and the pages after the reset link back to
``/ui/login?return_to=...``. ``/ui/verify`` in the browser that signed up also signs in and
goes on where the sign-up was heading (ADR 0042). A link's GET only shows a form (mail scanners
fetch links): the token is spent by the POST.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from aiohttp import web

from domain.errors import (
    DomainError,
    InvalidVerificationToken,
    MfaRequired,
    RateLimited,
    StorageFault,
    ValidationFailed,
)
from domain.texts import Text
from entrypoints.http.keys import CONTAINER
from entrypoints.http.language import page_locale
from entrypoints.http.oidc import client_of
from entrypoints.http.pages import signup
from entrypoints.http.pages.web import (
    clear_cookie,
    cookie_name,
    csrf_ok,
    csrf_refused,
    issuer_of,
    page,
    read_page_form,
    safe_return_to,
    see_other,
    session_cookie,
    set_cookie,
)
from entrypoints.http.requests import client_address, user_agent
from entrypoints.http.routing import Handler, RouteSpec

RETURN_COOKIE = "return_to"
"""The cookie (``authsvc_return_to``) keeping where to go after a password reset."""
BAD_LINK = Text("This link is invalid, expired or used already.")
SENT = Text(
    "If an account uses this address, we sent it a link to choose a new password."
    " The link works for a limited time."
)
LINK_NOT_VALID = Text("Link not valid")
SIGN_IN = Text("Sign in")
_MAX_TOKEN = 512


def _signing_in(return_to: str | None) -> str:
    """The login page that resumes ``return_to`` (or a plain one)."""
    if not return_to:
        return "/ui/login"
    return "/ui/login?" + urlencode({"return_to": return_to}, quote_via=quote)


def _from_referer(request: web.Request) -> str | None:
    """The ``return_to`` of the login page of this service that linked here, if any."""
    referer = urlsplit(request.headers.get("Referer", ""))
    issuer = urlsplit(issuer_of(request))
    if (referer.scheme, referer.netloc) != (issuer.scheme, issuer.netloc):
        return None
    if referer.path != "/ui/login":
        return None
    values = [v for k, v in parse_qsl(referer.query) if k == "return_to"]
    return safe_return_to(values[0]) if len(values) == 1 else None


def _kept_return_to(request: web.Request) -> str | None:
    return safe_return_to(request.cookies.get(cookie_name(request, RETURN_COOKIE)))


async def forgot_page(request: web.Request) -> web.Response:
    """GET /ui/forgot[?return_to=<path>] → the form asking for the email address."""
    return_to = safe_return_to(request.query.get("return_to")) or _from_referer(request) or ""
    context = {"return_to": return_to, "email": "", "sign_in": _signing_in(return_to)}
    return page(request, "forgot.html", context)


async def forgot(request: web.Request) -> web.Response:
    """POST /ui/forgot ``email``, ``csrf_token``, ``return_to`` → 303 /ui/forgot/sent, alike for
    a known and an unknown email (the link is mailed in the background); the form again with
    400 for an email whose syntax is wrong, 429 (``Retry-After``) when throttled; 403 on a
    CSRF failure."""
    form = await read_page_form(request)
    if form is None or not csrf_ok(request, form):
        return csrf_refused(request)
    container = request.app[CONTAINER]
    return_to = safe_return_to(form.get("return_to")) or ""
    email = form.get("email", "")
    context: dict[str, str | Text] = {
        "return_to": return_to,
        "email": email,
        "sign_in": _signing_in(return_to),
    }
    try:
        await container.password_recovery().forgot(
            email,
            client_address(request, container.config().server.trusted_proxies),
            locale=page_locale(request, return_to),
        )
    except RateLimited as e:
        context["error"] = Text(
            "Too many requests. Wait {seconds} seconds, then try again.", seconds=e.retry_after
        )
        response = page(request, "forgot.html", context, status=429)
        response.headers["Retry-After"] = str(e.retry_after)
        return response
    except ValidationFailed:
        context["error"] = Text("Enter a valid email address.")
        return page(request, "forgot.html", context, status=400)
    response = see_other(request, "/ui/forgot/sent?" + urlencode({"return_to": return_to}))
    if return_to:
        ttl = container.auth_settings().current.password_reset_ttl
        set_cookie(response, request, RETURN_COOKIE, return_to, max_age=ttl)
    return response


async def forgot_sent_page(request: web.Request) -> web.Response:
    """GET /ui/forgot/sent[?return_to=] → "check your email", with a way back to sign in."""
    return_to = safe_return_to(request.query.get("return_to"))
    context = {"heading": Text("Check your email"), "message": SENT,
               "link": _signing_in(return_to), "link_text": Text("Back to sign in")}  # fmt: skip
    return page(request, "message.html", context)


def _token(request: web.Request, form: dict[str, str] | None = None) -> str:
    raw = (form or {}).get("token") if form is not None else request.query.get("token")
    return (raw or "")[:_MAX_TOKEN]


async def reset_page(request: web.Request) -> web.Response:
    """GET /ui/reset?token=<the link's token> → the new-password form (the token is spent only
    by the POST)."""
    return page(request, "reset.html", {"token": _token(request)})


async def reset(request: web.Request) -> web.Response:
    """POST /ui/reset ``token``, ``new_password``, ``csrf_token`` → 303 /ui/reset/done (every
    session of the user ended, as by POST /password/reset); the form again with 422 for a
    password the policy refuses; 400 page for a bad, expired or used link; 403 on CSRF."""
    form = await read_page_form(request)
    if form is None or not csrf_ok(request, form):
        return csrf_refused(request)
    token = _token(request, form)
    try:
        await request.app[CONTAINER].password_recovery().reset(token, form.get("new_password", ""))
    except ValidationFailed as e:
        reasons = "; ".join(err.message for err in e.errors)
        refused = Text("This password cannot be used: {reasons}.", reasons=reasons)
        context = {"token": token,
                   "error": refused if reasons else Text("Choose another password.")}  # fmt: skip
        return page(request, "reset.html", context, status=422)
    except StorageFault:
        raise  # no refusal: the problem middleware's 503
    except DomainError:
        context = {"heading": LINK_NOT_VALID, "message": BAD_LINK,
                   "link": "/ui/forgot", "link_text": Text("Ask for a new link")}  # fmt: skip
        return page(request, "message.html", context, status=400)
    return see_other(request, "/ui/reset/done")


async def reset_done_page(request: web.Request) -> web.Response:
    """GET /ui/reset/done → "password changed", linking to sign in (back to the interaction
    kept in the ``authsvc_return_to`` cookie, which it clears)."""
    context = {"heading": Text("Password changed"), "message": Text("Your new password is set."),
               "link": _signing_in(_kept_return_to(request)), "link_text": SIGN_IN}  # fmt: skip
    response = page(request, "message.html", context)
    clear_cookie(response, request, RETURN_COOKIE)
    return response


async def verify_page(request: web.Request) -> web.Response:
    """GET /ui/verify?token=<the link's token> → a page whose button confirms the address."""
    return page(request, "verify.html", {"token": _token(request)})


async def verify(request: web.Request) -> web.Response:
    """POST /ui/verify ``token``, ``csrf_token`` → the address confirmed; in the browser that
    signed up (its sign-up proof cookie, ``entrypoints.http.pages.signup``) also signed in and
    303 to where the sign-up was heading (or to the second step for a user with MFA on);
    elsewhere 303 /ui/verify/done. 400 page for a bad, expired or used link; 403 on CSRF."""
    form = await read_page_form(request)
    if form is None or not csrf_ok(request, form):
        return csrf_refused(request)
    container = request.app[CONTAINER]
    return_to = safe_return_to(request.cookies.get(cookie_name(request, signup.RETURN_COOKIE)))
    return_to = return_to or signup.DEFAULT_RETURN_TO
    address = client_address(request, container.config().server.trusted_proxies)
    try:
        cookie = await container.sign_up().verify(
            _token(request, form), request.cookies.get(cookie_name(request, signup.PROOF_COOKIE)),
            address, user_agent(request), client_of(return_to), previous=session_cookie(request),
        )  # fmt: skip
    except InvalidVerificationToken:
        context = {"heading": LINK_NOT_VALID, "message": BAD_LINK}
        return page(request, "message.html", context, status=400)
    except MfaRequired as e:
        response = see_other(request, "/ui/login/mfa?" + urlencode({"return_to": return_to}))
        ttl = container.auth_settings().current.mfa_token_ttl
        set_cookie(response, request, "mfa", e.mfa_token, max_age=ttl)
        return _signed_up(response, request)
    except StorageFault:
        raise  # no refusal: the problem middleware's 503
    except DomainError:  # confirmed, but this account may not sign in now
        return _signed_up(see_other(request, "/ui/verify/done"), request)
    if cookie is None:
        return see_other(request, "/ui/verify/done")
    response = see_other(request, return_to)
    set_cookie(response, request, "session", cookie)
    return _signed_up(response, request)


def _signed_up(response: web.Response, request: web.Request) -> web.Response:
    """``response`` clearing the sign-up's cookies (its proof served its one purpose)."""
    clear_cookie(response, request, signup.PROOF_COOKIE)
    clear_cookie(response, request, signup.RETURN_COOKIE)
    return response


async def verify_done_page(request: web.Request) -> web.Response:
    """GET /ui/verify/done → "email confirmed"."""
    context = {"heading": Text("Email confirmed"),
               "message": Text("Your email address is confirmed."),
               "link": "/ui/login", "link_text": SIGN_IN}  # fmt: skip
    return page(request, "message.html", context)


_HTML = "HTML page"
_FORM = "application/x-www-form-urlencoded"
_FORM_ANY = {"type": "object", "properties": {}}
_QUERY = {"in": "query", "required": False, "schema": {"type": "string"}}
_RETURN_TO = ({"name": "return_to", **_QUERY},)
_TOKEN = ({"name": "token", **_QUERY},)
_SEE_OTHER = "See other (303)"


def _post(path: str, handler: Handler, summary: str, statuses: dict[int, str]) -> RouteSpec:
    return RouteSpec("POST", path, handler, summary, {303: _SEE_OTHER, 403: _HTML, **statuses},
                     request=_FORM_ANY, media_type=_FORM, tag="ui", page=True)  # fmt: skip


ROUTES = [
    RouteSpec("GET", "/ui/forgot", forgot_page, "The forgot-password page", {200: _HTML},
              parameters=_RETURN_TO, tag="ui", page=True),
    _post("/ui/forgot", forgot, "Ask for a password-reset link (the same for unknown emails)",
          {400: _HTML, 429: _HTML}),
    RouteSpec("GET", "/ui/forgot/sent", forgot_sent_page, "The check-your-email page",
              {200: _HTML}, parameters=_RETURN_TO, tag="ui", page=True),
    RouteSpec("GET", "/ui/reset", reset_page, "The new-password page of a reset link",
              {200: _HTML}, parameters=_TOKEN, tag="ui", page=True),
    _post("/ui/reset", reset, "Set a new password with a reset link's token",
          {400: _HTML, 422: _HTML}),
    RouteSpec("GET", "/ui/reset/done", reset_done_page, "The password-changed page",
              {200: _HTML}, tag="ui", page=True),
    RouteSpec("GET", "/ui/verify", verify_page, "The confirm-email page of a verification link",
              {200: _HTML}, parameters=_TOKEN, tag="ui", page=True),
    _post("/ui/verify", verify, "Confirm the email address with a verification link's token",
          {400: _HTML}),
    RouteSpec("GET", "/ui/verify/done", verify_done_page, "The email-confirmed page",
              {200: _HTML}, tag="ui", page=True),
]  # fmt: skip
"""The recovery pages of docs/reference/accounts.md and docs/reference/oauth-and-oidc.md."""
