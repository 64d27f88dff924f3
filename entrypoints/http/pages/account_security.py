"""The account page's security actions (docs/reference/accounts.md, "The account page:
security"): the fresh-login rule and its re-authentication page, the password change, the
account's deletion, and the small helpers the other security pages (``account_mfa``,
``account_passkeys``) share.

Adding a factor, changing the password and deleting the account need a login of at most
``ui.reauthentication_window`` seconds ago in this hosted session
(``application.login.hosted_account``); older, the page sends the browser to
``/ui/account/reauthenticate``, which asks for the password (counted by the login throttle like
the JSON API's) and comes back. Every action calls the JSON API's use case with the same
throttle and audit; every POST is CSRF-checked and answers 303 — but for the pages that show a
secret once (recovery codes, a TOTP secret), which cannot go through a redirect.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from application.login.hosted_account import AccountVisit
from application.shared.reauth import FreshProof, RecentLogin
from domain.errors import (
    DomainError,
    InvalidOldPassword,
    RateLimited,
    ReauthenticationRequired,
    ValidationFailed,
)
from domain.texts import Text
from entrypoints.http.keys import CONTAINER
from entrypoints.http.pages.web import (
    clear_cookie,
    csrf_ok,
    csrf_refused,
    page,
    read_page_form,
    refusal_message,
    safe_return_to,
    see_other,
    session_cookie,
)
from entrypoints.http.problems import status_of
from entrypoints.http.requests import client_address
from entrypoints.http.routing import RouteSpec

ACCOUNT = "/ui/account"
REAUTHENTICATE = "/ui/account/reauthenticate"
WRONG_PASSWORD = Text("The password is wrong.")
TOO_MANY = Text("Too many failed attempts. Wait {seconds} seconds, then try again.")
DONE = {
    "password": Text("Your password is changed. Your other sessions are signed out."),
    "mfa-off": Text("Two-step sign-in is off."),
    "passkey-removed": Text("The passkey is removed."),
    "passkey-renamed": Text("The passkey is renamed."),
}
"""The notes ``/ui/account/done?action=`` shows after an action (anything else: none)."""


def client_of_request(request: web.Request) -> str:
    """The client address under ``server.trusted_proxies`` (for the login throttle)."""
    return client_address(request, request.app[CONTAINER].config().server.trusted_proxies)


def login_url(here: str) -> str:
    """The login page that comes back to ``here``."""
    return "/ui/login?" + urlencode({"return_to": here})


async def signed_in_visit(request: web.Request, here: str) -> AccountVisit | web.Response:
    """The account visit of this browser's hosted session, or a 303 to the login page that
    comes back to ``here``."""
    visit = await request.app[CONTAINER].hosted_account().visit(session_cookie(request))
    return see_other(request, login_url(here)) if visit is None else visit


async def fresh_visit(
    request: web.Request, here: str
) -> tuple[AccountVisit, RecentLogin] | web.Response:
    """The visit and its ``RecentLogin`` when the hosted session's login is recent enough
    (``ui.reauthentication_window``); else a 303 to the login page, or to the
    re-authentication page that comes back to ``here``."""
    visit = await signed_in_visit(request, here)
    if isinstance(visit, web.Response):
        return visit
    if visit.recent is None:
        return see_other(request, REAUTHENTICATE + "?" + urlencode({"return_to": here}))
    return visit, visit.recent


async def posted_form(request: web.Request) -> dict[str, str] | web.Response:
    """The CSRF-checked form of a POST, or the 403 page."""
    form = await read_page_form(request)
    if form is None or not csrf_ok(request, form):
        return csrf_refused(request)
    return form


def refused(
    request: web.Request, template: str, context: dict[str, Any], error: DomainError
) -> web.Response:
    """The form again after a refusal: a wrong password (403, the one message), a rule broken
    (the use case's status and its fields), or the login throttle's 429 with ``Retry-After``.
    Anything else is raised again for the pages' error page."""
    if isinstance(error, RateLimited):
        message = TOO_MANY.filled(seconds=error.retry_after)
        response = page(request, template, {**context, "error": message}, 429)
        response.headers["Retry-After"] = str(error.retry_after)
        return response
    if isinstance(error, InvalidOldPassword | ReauthenticationRequired):
        return page(request, template, {**context, "error": WRONG_PASSWORD}, 403)
    if isinstance(error, ValidationFailed):
        status = status_of(error)
        return page(request, template, {**context, "error": refusal_message(error, status)},
                    status)  # fmt: skip
    raise error


def account_return_to(value: str | None) -> str:
    """Where re-authentication goes on: an account page (``/ui/account...``), else the account
    page itself."""
    target = safe_return_to(value)
    return target if target is not None and target.startswith(ACCOUNT) else ACCOUNT


async def reauthenticate_page(request: web.Request) -> web.Response:
    """GET /ui/account/reauthenticate?return_to=<account path> → the password form."""
    return_to = account_return_to(request.query.get("return_to"))
    visit = await signed_in_visit(request, return_to)
    if isinstance(visit, web.Response):
        return visit
    return page(request, "account_reauthenticate.html", _reauth_context(request, visit, return_to))


def _reauth_context(request: web.Request, visit: AccountVisit | None,
                    return_to: str) -> dict[str, Any]:  # fmt: skip
    """The re-authentication page's values: the passkey button for a user with a passkey when
    ``webauthn.passwordless`` is on (the options come from ``/login/passkey/options``)."""
    if visit is None:
        return {"return_to": return_to}
    passwordless = request.app[CONTAINER].webauthn_settings().current.passwordless
    return {"return_to": return_to, "email": visit.user.email,
            "passkeys": visit.user.passkeys > 0 and passwordless}  # fmt: skip


async def reauthenticate(request: web.Request) -> web.Response:
    """POST /ui/account/reauthenticate ``password``, ``return_to``, ``csrf_token`` → 303 to
    ``return_to`` with the session's login time now; 403 the form again for a wrong password
    (counted by the login throttle), 429 past it."""
    form = await posted_form(request)
    if isinstance(form, web.Response):
        return form
    return_to = account_return_to(form.get("return_to"))
    proof = FreshProof(password=form.get("password", ""))
    try:
        done = (
            await request.app[CONTAINER]
            .hosted_account()
            .reauthenticate(session_cookie(request), proof, client_of_request(request))
        )
    except (RateLimited, ReauthenticationRequired, ValidationFailed) as e:
        visit = await request.app[CONTAINER].hosted_account().visit(session_cookie(request))
        context = _reauth_context(request, visit, return_to)
        return refused(request, "account_reauthenticate.html", context, e)
    return see_other(request, return_to if done else login_url(return_to))


async def password_page(request: web.Request) -> web.Response:
    """GET /ui/account/password → the password form (old, new, new again; the rules shown)."""
    fresh = await fresh_visit(request, "/ui/account/password")
    if isinstance(fresh, web.Response):
        return fresh
    return page(request, "account_password.html", _password_rules(request))


def _password_rules(request: web.Request) -> dict[str, Any]:
    return {"min_length": request.app[CONTAINER].auth_settings().current.password_min_length}


async def change_password(request: web.Request) -> web.Response:
    """POST /ui/account/password ``old_password``, ``new_password``, ``new_password_again`` →
    303 to /ui/account/done; every other session of the user ends, this one goes on
    (``AuthService.change_password`` with ``keep_session``); 403 wrong old password, 422 a
    new password that breaks the rules or differs from its repetition, 429."""
    form = await posted_form(request)
    if isinstance(form, web.Response):
        return form
    fresh = await fresh_visit(request, "/ui/account/password")
    if isinstance(fresh, web.Response):
        return fresh
    visit, recent = fresh
    context = _password_rules(request)
    new = form.get("new_password", "")
    if new != form.get("new_password_again", ""):
        return page(request, "account_password.html",
                    {**context, "error": Text("The new passwords differ.")}, 422)  # fmt: skip
    try:
        await request.app[CONTAINER].auth_service().change_password(
            visit.user.id, form.get("old_password", ""), new, client_of_request(request),
            keep_session=recent.session_id,
        )  # fmt: skip
    except (InvalidOldPassword, RateLimited, ValidationFailed) as e:
        return refused(request, "account_password.html", context, e)
    return see_other(request, "/ui/account/done?action=password")


async def delete_page(request: web.Request) -> web.Response:
    """GET /ui/account/delete → the confirmation page (the password asked again)."""
    fresh = await fresh_visit(request, "/ui/account/delete")
    if isinstance(fresh, web.Response):
        return fresh
    return page(request, "account_delete.html", {"email": fresh[0].user.email})


async def delete_account(request: web.Request) -> web.Response:
    """POST /ui/account/delete ``password`` → 303 to /ui/account/deleted, signed out (the
    user, its sessions and factors gone: ``DeleteOwnAccount``, as ``DELETE /me``); 403 a wrong
    password, 429, 409 for the last superadmin (the error page)."""
    form = await posted_form(request)
    if isinstance(form, web.Response):
        return form
    fresh = await fresh_visit(request, "/ui/account/delete")
    if isinstance(fresh, web.Response):
        return fresh
    user = fresh[0].user
    try:
        await request.app[CONTAINER].delete_own_account()(
            user, form.get("password", ""), client_of_request(request)
        )
    except (InvalidOldPassword, RateLimited) as e:
        return refused(request, "account_delete.html", {"email": user.email}, e)
    response = see_other(request, "/ui/account/deleted")
    clear_cookie(response, request, "session")
    return response


async def deleted_page(request: web.Request) -> web.Response:
    """GET /ui/account/deleted → the goodbye page."""
    return page(request, "message.html", {
        "heading": Text("Account deleted"),
        "message": Text("Your account and everything in it are deleted. Goodbye."),
    })  # fmt: skip


async def done_page(request: web.Request) -> web.Response:
    """GET /ui/account/done?action=<what> → a note that the action worked, with a link back to
    the account page (an unknown ``action`` shows no note)."""
    message = DONE.get(request.query.get("action", ""), Text("Done."))
    context = {"heading": Text("Your account"), "message": message, "link": ACCOUNT,
               "link_text": Text("Back to your account")}  # fmt: skip
    return page(request, "message.html", context)


_HTML = "HTML page"
_SEE_OTHER = "See other (303)"
_FORM_BODY: dict[str, Any] = {"type": "object", "properties": {}}
_RETURN_TO = ({"name": "return_to", "in": "query", "required": False,
               "schema": {"type": "string"}},)  # fmt: skip


def get(path: str, handler: Any, summary: str, **extra: Any) -> RouteSpec:
    """A GET account page: 200, or 303 to the login or re-authentication page."""
    return RouteSpec("GET", path, handler, summary, {200: _HTML, 303: _SEE_OTHER},
                     tag="ui", page=True, **extra)  # fmt: skip


def post(path: str, handler: Any, summary: str, extra: dict[int, str]) -> RouteSpec:
    """A POST account form: 303, 403 (CSRF, wrong password) and the statuses in ``extra``."""
    return RouteSpec("POST", path, handler, summary, {303: _SEE_OTHER, 403: _HTML, **extra},
                     request=_FORM_BODY, media_type="application/x-www-form-urlencoded",
                     tag="ui", page=True)  # fmt: skip


ROUTES = [
    get(REAUTHENTICATE, reauthenticate_page, "Confirm who you are (the password)",
        parameters=_RETURN_TO),
    post(REAUTHENTICATE, reauthenticate, "Confirm who you are", {429: _HTML}),
    get("/ui/account/password", password_page, "The password change form"),
    post("/ui/account/password", change_password, "Change the password",
         {422: _HTML, 429: _HTML}),
    get("/ui/account/delete", delete_page, "The account deletion page"),
    post("/ui/account/delete", delete_account, "Delete the account", {409: _HTML, 429: _HTML}),
    get("/ui/account/deleted", deleted_page, "The goodbye page"),
    get("/ui/account/done", done_page, "An account action's note",
        parameters=({"name": "action", "in": "query", "required": False,
                     "schema": {"type": "string"}},)),
]  # fmt: skip
"""The account page's security routes (docs/reference/accounts.md)."""
