"""Changing the email on the account page (docs/reference/accounts.md, "Changing the email"; ADR
0043): the form (the new address and the password; it needs a recent login, as the other
sensitive actions), the "check your new address" page, and the landing page of the link mailed
to the new address, whose button confirms the change (a POST: a mail scanner that fetches the
link changes nothing). Each step is ``EmailChange``'s, as ``POST /me/email`` and ``POST
/email/change``.
"""

from __future__ import annotations

from urllib.parse import urlencode

from aiohttp import web

from adapters.mail.writer import duration
from domain.errors import (
    EmailTaken,
    InvalidOldPassword,
    InvalidVerificationToken,
    RateLimited,
    ValidationFailed,
)
from domain.texts import Text
from entrypoints.http.keys import CONTAINER
from entrypoints.http.language import page_locale
from entrypoints.http.pages.account_security import (
    client_of_request,
    fresh_visit,
    get,
    post,
    posted_form,
    refused,
)
from entrypoints.http.pages.web import page, see_other

EMAIL = "/ui/account/email"
CONFIRM = "/ui/account/email/confirm"
LINK_FAILED = Text(
    "This link is not valid any more: it was used, it expired, or a newer one was sent."
)
TAKEN = Text("Another account uses this address, so it cannot be yours here. Nothing changed.")


async def email_page(request: web.Request) -> web.Response:
    """GET /ui/account/email → the form (the current address shown)."""
    fresh = await fresh_visit(request, EMAIL)
    if isinstance(fresh, web.Response):
        return fresh
    return page(request, "account_email.html", {"email": fresh[0].user.email})


async def request_change(request: web.Request) -> web.Response:
    """POST /ui/account/email ``new_email``, ``password`` → 303 to /ui/account/email/sent (the
    same whether or not the address is taken); 403 the form again for a wrong password
    (counted), 422 for a malformed or the current address, 429."""
    form = await posted_form(request)
    if isinstance(form, web.Response):
        return form
    fresh = await fresh_visit(request, EMAIL)
    if isinstance(fresh, web.Response):
        return fresh
    user = fresh[0].user
    try:
        await request.app[CONTAINER].email_change().request(
            user.id, form.get("new_email", ""), form.get("password", ""),
            client_of_request(request), page_locale(request),
        )  # fmt: skip
    except (InvalidOldPassword, RateLimited, ValidationFailed) as e:
        return refused(request, "account_email.html", {"email": user.email}, e)
    return see_other(request, EMAIL + "/sent")


async def sent_page(request: web.Request) -> web.Response:
    """GET /ui/account/email/sent → "check your new address"."""
    ttl = request.app[CONTAINER].auth_settings().current.email_verification_ttl
    message = Text("We sent a link to the new address. Open it to finish the change; until then"
                   " your account keeps its current address. The link works for {duration}.",
                   duration=duration(ttl, page_locale(request)))  # fmt: skip
    return page(request, "message.html", {"heading": Text("Check your new address"),
                                          "message": message, "link": "/ui/account",
                                          "link_text": Text("Back to your account")})  # fmt: skip


async def confirm_page(request: web.Request) -> web.Response:
    """GET /ui/account/email/confirm?token= → the confirmation button (nothing changes yet)."""
    token = request.query.get("token", "")[:128]
    return page(request, "account_email_confirm.html", {"token": token})


async def confirm(request: web.Request) -> web.Response:
    """POST /ui/account/email/confirm ``token`` → 303 to /ui/account/email/changed; 400 the
    error page for a bad, used or expired link; 409 when the address was taken meanwhile."""
    form = await posted_form(request)
    if isinstance(form, web.Response):
        return form
    try:
        await (
            request.app[CONTAINER]
            .email_change()
            .confirm(form.get("token", "")[:128], page_locale(request))
        )
    except InvalidVerificationToken:
        return page(request, "error.html", {"message": LINK_FAILED}, 400)
    except EmailTaken:
        return page(request, "error.html", {"message": TAKEN}, 409)
    return see_other(request, EMAIL + "/changed")


async def changed_page(request: web.Request) -> web.Response:
    """GET /ui/account/email/changed → the change is done; the old address was told."""
    return page(request, "message.html", {
        "heading": Text("Email changed"),
        "message": Text("Your account now uses the new address. We told the old one."),
        "link": "/ui/login?" + urlencode({"return_to": "/ui/account"}),
        "link_text": Text("Go to your account"),
    })  # fmt: skip


_HTML = "HTML page"

ROUTES = [
    get(EMAIL, email_page, "The email change form"),
    post(EMAIL, request_change, "Change the email (a link goes to the new address)",
         {422: _HTML, 429: _HTML}),
    get(EMAIL + "/sent", sent_page, "Check your new address"),
    get(CONFIRM, confirm_page, "The email change link's page",
        parameters=({"name": "token", "in": "query", "required": False,
                     "schema": {"type": "string"}},)),
    post(CONFIRM, confirm, "Confirm the email change", {400: _HTML, 409: _HTML}),
    get(EMAIL + "/changed", changed_page, "The email is changed"),
]  # fmt: skip
"""The account page's email-change routes (docs/reference/accounts.md)."""
