"""The invitation page (docs/reference/invitations.md): ``/ui/invitation?token=`` shows the
invitation of an emailed link — the organization and the email — and accepting it (a password,
or a configured identity provider) creates the account and signs it in, landing on
``/ui/account``.

A link's GET only shows the form (mail scanners fetch links): the link is spent by the POST, in
the unit of work that creates the account (``application.login.invitation``). Every POST is
CSRF-checked and answers 303; an invalid, expired, revoked or used link gets the message page
(400), an email that has an account meanwhile 409; nothing is created then.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from application.login.invitation import MAX_TOKEN_LENGTH
from domain.errors import EmailTaken, InvalidInvitation, StorageFault, ValidationFailed
from domain.invitations import Invitation
from entrypoints.http.keys import CONTAINER
from entrypoints.http.pages.routes import signed_in
from entrypoints.http.pages.web import (
    csrf_ok,
    csrf_refused,
    page,
    read_page_form,
    session_cookie,
)
from entrypoints.http.requests import client_address, user_agent
from entrypoints.http.routing import RouteSpec

LANDING = "/ui/account"
"""Where an accepted invitation lands, signed in."""


def link_token(raw: str | None) -> str:
    """The token a form or query carries, cut one past the longest a token may be (so that an
    overlong one stays invalid)."""
    return (raw or "")[: MAX_TOKEN_LENGTH + 1]


def _providers(request: web.Request) -> list[dict[str, str]]:
    """The enabled identity providers the invited person may sign in with instead."""
    enabled = request.app[CONTAINER].federation_settings().current.enabled()
    return [{"id": p.id, "name": p.name} for p in enabled]


def _form(
    request: web.Request, invitation: Invitation, token: str, status: int = 200,
    problem: str | None = None,
) -> web.Response:  # fmt: skip
    context: dict[str, Any] = {
        "token": token,
        "org_id": invitation.org_id,
        "email": invitation.email,
        "min_length": request.app[CONTAINER].auth_settings().current.password_min_length,
        "providers": _providers(request),
        "problem": problem,
    }
    return page(request, "invitation.html", context, status=status)


def refused(request: web.Request, error: InvalidInvitation | EmailTaken) -> web.Response:
    """The page of an invitation that cannot be accepted: 400 for a bad link, 409 when the
    email has an account already."""
    reason = "taken" if isinstance(error, EmailTaken) else "invalid"
    return page(request, "invitation_refused.html", {"reason": reason},
                status=409 if reason == "taken" else 400)  # fmt: skip


async def invitation_page(request: web.Request) -> web.Response:
    """GET /ui/invitation?token=<the link's token> → the organization, the email and the
    password form (and the providers); 400 page for a bad, expired, revoked or used link."""
    token = link_token(request.query.get("token"))
    try:
        invitation = await request.app[CONTAINER].invitation_acceptance().open(token)
    except InvalidInvitation as e:
        return refused(request, e)
    return _form(request, invitation, token)


async def accept(request: web.Request) -> web.Response:
    """POST /ui/invitation ``token``, ``password``, ``password_again``, ``csrf_token`` → 303
    /ui/account, signed in; the form again with 422 for passwords that differ or that the
    policy refuses; 400 / 409 page as ``refused``; 403 on a CSRF failure."""
    form = await read_page_form(request)
    if form is None or not csrf_ok(request, form):
        return csrf_refused(request)
    container = request.app[CONTAINER]
    acceptance = container.invitation_acceptance()
    token = link_token(form.get("token"))
    password = form.get("password", "")
    try:
        invitation = await acceptance.open(token)
        if password != form.get("password_again", ""):
            return _form(request, invitation, token, 422, "mismatch")
        address = client_address(request, container.config().server.trusted_proxies)
        start = container.hosted_login().start(
            user_agent(request), address, None, previous=session_cookie(request)
        )
        cookie = await acceptance.accept_with_password(token, password, start)
    except ValidationFailed:
        return _form(request, invitation, token, 422, "policy")
    except (InvalidInvitation, EmailTaken) as e:
        return refused(request, e)
    except StorageFault:
        raise  # no refusal: the problem middleware's 503
    return signed_in(request, LANDING, cookie)


_HTML = "HTML page"
_FORM = "application/x-www-form-urlencoded"

ROUTES = [
    RouteSpec("GET", "/ui/invitation", invitation_page,
              "The invitation page of an emailed link (its organization and email)",
              {200: _HTML, 400: _HTML},
              parameters=({"name": "token", "in": "query", "required": False,
                           "schema": {"type": "string"}},), tag="ui", page=True),
    RouteSpec("POST", "/ui/invitation", accept,
              "Accept an invitation with a new password (creates the account, signs it in)",
              {303: "See other (303)", 400: _HTML, 403: _HTML, 409: _HTML, 422: _HTML},
              request={"type": "object", "properties": {}}, media_type=_FORM, tag="ui",
              page=True),
]  # fmt: skip
"""The invitation page of docs/reference/invitations.md."""
