"""The admin console's plumbing (docs/reference/console.md): who is at the console, the rules every
/ui/admin page follows, and the static files it loads.

``console_page`` wraps each handler: a POST is first checked like every hosted page's
(``read_page_form`` + ``csrf_ok``: a foreign ``Origin`` or a missing token → 403 page); the
hosted session's cookie becomes the caller (``ConsoleCaller``: no live session → 303 to
``/ui/login?return_to=<this page>``); ``ConsoleCaller.admit`` asks ``domain.policy`` whether
that role may use the console (viewer, operator → 403 page). The handler then calls the same
use cases as the JSON API, and their ``DomainError`` becomes a page of the same status
(``status_of``: 403, 404 — another organization's user reads as missing — 409, 422).
Handlers decide no access themselves.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from domain.errors import DomainError, StorageFault
from domain.policy import Principal
from domain.texts import Text
from entrypoints.http.keys import CONTAINER
from entrypoints.http.pages.web import (
    csrf_ok,
    csrf_refused,
    page,
    read_page_form,
    refusal_message,
    see_other,
    session_cookie,
)
from entrypoints.http.problems import status_of

__all__ = [
    "DONE",
    "ConsoleHandler",
    "confirm",
    "console_page",
    "done",
    "failed",
    "render",
]

ConsoleHandler = Callable[[web.Request, Principal, dict[str, str]], Awaitable[web.StreamResponse]]
"""A console handler: the request, the admitted caller and the posted form (``{}`` on GET)."""
TEMPLATES = Path(__file__).parent / "templates"
"""The console's shipped templates (``admin/*.html``)."""
DONE: dict[str, Text] = {
    "role": Text("The role is changed."),
    "disabled": Text("The user is disabled; its sessions ended."),
    "enabled": Text("The user is enabled."),
    "deleted": Text("The user is deleted."),
    "moved": Text("The user is moved; it left the groups of its old organization."),
    "session": Text("The session ended."),
    "sessions": Text("Every session of the user ended."),
    "mfa": Text("Two-step verification is turned off."),
    "passkey": Text("The passkey is deleted."),
    "reset_sent": Text("A password-reset link is on its way to the user's email."),
    "group": Text("The group is created."),
    "renamed": Text("The group is renamed."),
    "group_deleted": Text("The group is deleted."),
    "member_added": Text("The member is added."),
    "member_removed": Text("The member is removed."),
    "client": Text("The client is registered."),
    "rotated": Text("A new secret is made."),
    "client_updated": Text("The client is changed."),
    "client_deleted": Text("The client is deleted."),
    "invited": Text("The invitation is sent."),
    "resent": Text("The invitation is sent again with a new link; the old link no longer works."),
    "revoked": Text("The invitation is revoked; its link no longer works."),
}
"""What a ``?done=`` key says on the page a change goes back to (unknown keys: nothing)."""
NAV = (
    ("/ui/admin", Text("Dashboard")),
    ("/ui/admin/users", Text("Users")),
    ("/ui/admin/invitations", Text("Invitations")),
    ("/ui/admin/groups", Text("Groups")),
    ("/ui/admin/clients", Text("OAuth clients")),
    ("/ui/admin/providers", Text("Identity providers")),
    ("/ui/admin/audit", Text("Audit log")),
)


def console_page(handler: ConsoleHandler) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """The aiohttp handler running ``handler`` under the console's rules (module docstring)."""

    @functools.wraps(handler)
    async def run(request: web.Request) -> web.StreamResponse:
        form: dict[str, str] = {}
        if request.method == "POST":
            posted = await read_page_form(request)
            if posted is None or not csrf_ok(request, posted):
                return csrf_refused(request)
            form = posted
        caller = request.app[CONTAINER].console_caller()
        principal = await caller(session_cookie(request))
        if principal is None:
            back = request.path_qs if request.method == "GET" else "/ui/admin"
            return see_other(request, "/ui/login?" + urlencode({"return_to": back}))
        try:
            caller.admit(principal)
            return await handler(request, principal, form)
        except StorageFault:
            raise  # no refusal: the problem middleware's 503
        except DomainError as e:
            return failed(request, principal, e)

    return run


def failed(request: web.Request, principal: Principal, error: DomainError) -> web.Response:
    """The page for a refused or failed action: the use case's status and a plain message
    (the fields of a ``ValidationFailed``; never another organization's data)."""
    status = status_of(error)
    message = refusal_message(error, status)
    return render(request, principal, "admin/error.html", {"message": message}, status=status)


def render(request: web.Request, principal: Principal, template: str, context: dict[str, Any],
           status: int = 200) -> web.Response:  # fmt: skip
    """A console page: ``template`` with the navigation, the caller and ``context``."""
    full = {"nav": NAV, "me": principal, "path": request.path,
            "done": DONE.get(request.query.get("done", "")), **context}  # fmt: skip
    return page(request, template, full, status=status)


def confirm(request: web.Request, principal: Principal, *, title: Text, what: Text,
            consequence: Text, cancel: str) -> web.Response:  # fmt: skip
    """The confirmation page a delete asks for first (GET of the delete's own path): ``what``
    goes, ``consequence`` follows; its form POSTs to this path, ``cancel`` leads back. Call it
    after the use case that shows the item, so a refused or missing item is that use case's
    403 or 404 page, never a confirmation."""
    context = {"title": title, "what": what, "consequence": consequence, "cancel": cancel,
               "action": request.path, "confirm_label": title}  # fmt: skip
    return render(request, principal, "admin/confirm.html", context)


def done(request: web.Request, location: str, key: str) -> web.Response:
    """303 to ``location`` saying what was done (``?done=`` a key of ``DONE``, never data)."""
    joiner = "&" if "?" in location else "?"
    return see_other(request, f"{location}{joiner}{urlencode({'done': key})}")
