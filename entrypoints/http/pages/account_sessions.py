"""The account page's sessions (docs/reference/tokens-and-sessions.md, "Sessions on the account
page"): ``GET /ui/account/sessions`` lists the user's live sessions — the device named from the
login's ``User-Agent`` (``entrypoints.http.pages.devices``), the client address, the app that
started it, when it was last used, and "this session" marked; ``POST /ui/account/sessions/end``
ends one and ``POST /ui/account/sessions/end-others`` every other one (the page's own goes on).

The same use cases as ``GET /me/sessions`` and ``DELETE /me/sessions/{id}``
(``application.sessions.manage``): the same audit rows (``session.ended``, reason ``user``), and
another user's session id is a 404 page that changes nothing.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from application.sessions.manage import ListedSession
from domain.errors import NotFound, ValidationFailed
from domain.texts import Text
from entrypoints.http.keys import CONTAINER
from entrypoints.http.pages.account import account_user, login_first, principal_of
from entrypoints.http.pages.devices import device_name
from entrypoints.http.pages.web import (
    csrf_ok,
    csrf_refused,
    error_page,
    page,
    read_page_form,
    see_other,
)
from entrypoints.http.routing import RouteSpec

__all__ = ["ROUTES"]

HERE = "/ui/account/sessions"
NOTICES = frozenset({"ended", "others_ended"})
"""``?done=`` values the page words after a POST (any other is ignored)."""
MAX_ID = 64
"""A posted session id is cut to this many characters before it is looked up."""
NO_SUCH_SESSION = Text("There is no such session, or it is not yours.")


def session_row(listed: ListedSession, current: str) -> dict[str, Any]:
    """One line of the page: ``id``, ``device`` (None: unknown), ``address``, ``app`` (the
    client's name; None for a session of the sign-in pages or the JSON API), ``created_at``,
    ``last_used_at`` (datetimes, UTC), ``current`` (it is this browser's session)."""
    session = listed.session
    return {
        "id": session.id, "device": device_name(session.user_agent),
        "address": session.client_address, "app": listed.client_name,
        "created_at": session.created_at, "last_used_at": session.last_used_at,
        "current": session.id == current,
    }  # fmt: skip


async def sessions_page(request: web.Request) -> web.Response:
    """GET /ui/account/sessions[?done=ended|others_ended] → the live sessions, newest first
    (this one marked); 303 to /ui/login without a hosted session."""
    found = await account_user(request)
    if found is None:
        return login_first(request, HERE)
    listed = await request.app[CONTAINER].list_sessions()(principal_of(found))
    current = found[1].session_id
    rows = [session_row(s, current) for s in listed]
    done = request.query.get("done")
    context = {
        "here": "sessions", "email": found[0].email, "sessions": rows,
        "others": any(not row["current"] for row in rows),
        "notice": done if done in NOTICES else None,
    }  # fmt: skip
    return page(request, "account_sessions.html", context)


async def end_session(request: web.Request) -> web.Response:
    """POST /ui/account/sessions/end ``session_id``, ``csrf_token`` → 303 to the sessions page
    (the session ended: ``DELETE /me/sessions/{id}``); 404 the error page for an unknown or
    ended session and for another user's (nothing changes); 403 on a CSRF failure; 303 to
    /ui/login without a hosted session. Ending this browser's own session signs it out."""
    form = await read_page_form(request)
    if form is None or not csrf_ok(request, form):
        return csrf_refused(request)
    found = await account_user(request)
    if found is None:
        return login_first(request, HERE)
    end = request.app[CONTAINER].end_own_session()
    try:
        await end(principal_of(found), form.get("session_id", "")[:MAX_ID])
    except (NotFound, ValidationFailed):
        return error_page(request, NO_SUCH_SESSION, 404)
    return see_other(request, f"{HERE}?done=ended")


async def end_other_sessions(request: web.Request) -> web.Response:
    """POST /ui/account/sessions/end-others ``csrf_token`` → 303 to the sessions page; every
    live session of the user ends but this browser's; 403 on a CSRF failure; 303 to /ui/login
    without a hosted session."""
    form = await read_page_form(request)
    if form is None or not csrf_ok(request, form):
        return csrf_refused(request)
    found = await account_user(request)
    if found is None:
        return login_first(request, HERE)
    await request.app[CONTAINER].end_other_sessions()(principal_of(found), found[1].session_id)
    return see_other(request, f"{HERE}?done=others_ended")


_HTML = "HTML page"
_FORM = {"type": "object", "properties": {}}
_POSTED = {303: "See other (303)", 403: _HTML}

ROUTES = [
    RouteSpec("GET", HERE, sessions_page, "The signed-in user's sessions",
              {200: _HTML, 303: "See other (303)"},
              parameters=({"name": "done", "in": "query", "required": False,
                           "schema": {"type": "string"}},),
              tag="ui", page=True),
    RouteSpec("POST", f"{HERE}/end", end_session, "End one of the signed-in user's sessions",
              {**_POSTED, 404: _HTML}, request=_FORM,
              media_type="application/x-www-form-urlencoded", tag="ui", page=True),
    RouteSpec("POST", f"{HERE}/end-others", end_other_sessions,
              "End every session of the signed-in user but this one", _POSTED, request=_FORM,
              media_type="application/x-www-form-urlencoded", tag="ui", page=True),
]  # fmt: skip
"""The sessions routes of the account page (docs/reference/tokens-and-sessions.md)."""
