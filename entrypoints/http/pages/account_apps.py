"""The account page's connected apps (docs/reference/accounts.md, "The account pages"): ``GET
/ui/account/apps`` lists the consents the user gave OpenID Connect clients (the client's name,
the scopes in words, when granted); ``POST /ui/account/apps/revoke`` revokes one — the same use
case as ``DELETE /me/consents/{client_id}`` (``application.oauth.consents``): the sessions that
client started for the user end too, and ``oauth.consent_revoked`` is audited.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from application.oauth.consents import ListedConsent
from domain.errors import NotFound, ValidationFailed
from domain.texts import Text
from entrypoints.http.keys import CONTAINER
from entrypoints.http.pages.account import account_user, login_first, principal_of
from entrypoints.http.pages.routes import SCOPE_WORDS
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

HERE = "/ui/account/apps"
MAX_ID = 64
"""A posted client id is cut to this many characters before it is looked up."""
NO_SUCH_APP = Text("There is no such app among the ones you allowed.")


def _words(scope: str) -> str | None:
    words = SCOPE_WORDS.get(scope)
    return None if words is None else words.msgid


def app_row(listed: ListedConsent) -> dict[str, Any]:
    """One line of the page: ``client_id``, ``name`` (the client's id when the client is
    gone), ``scopes`` (``(scope, words)`` pairs; the message id of the consent page's words,
    which the template translates, or None for a scope it does not word), ``granted_at``
    (datetime, UTC)."""
    consent = listed.consent
    return {
        "client_id": consent.client_id, "name": listed.client_name or consent.client_id,
        "scopes": [(s, _words(s)) for s in consent.scopes],
        "granted_at": consent.granted_at,
    }  # fmt: skip


async def apps_page(request: web.Request) -> web.Response:
    """GET /ui/account/apps[?done=revoked] → the user's consents, newest grant first; 303 to
    /ui/login without a hosted session."""
    found = await account_user(request)
    if found is None:
        return login_first(request, HERE)
    consents = await request.app[CONTAINER].list_consents()(principal_of(found))
    context = {
        "here": "apps", "email": found[0].email, "apps": [app_row(c) for c in consents],
        "notice": "revoked" if request.query.get("done") == "revoked" else None,
    }  # fmt: skip
    return page(request, "account_apps.html", context)


async def revoke(request: web.Request) -> web.Response:
    """POST /ui/account/apps/revoke ``client_id``, ``csrf_token`` → 303 to the apps page (the
    consent revoked, the sessions that app started ended); 404 the error page when the user
    gave that client no consent (nothing changes); 403 on a CSRF failure; 303 to /ui/login
    without a hosted session."""
    form = await read_page_form(request)
    if form is None or not csrf_ok(request, form):
        return csrf_refused(request)
    found = await account_user(request)
    if found is None:
        return login_first(request, HERE)
    try:
        await request.app[CONTAINER].revoke_consent()(
            principal_of(found), form.get("client_id", "")[:MAX_ID]
        )
    except (NotFound, ValidationFailed):
        return error_page(request, NO_SUCH_APP, 404)
    return see_other(request, f"{HERE}?done=revoked")


_HTML = "HTML page"

ROUTES = [
    RouteSpec("GET", HERE, apps_page, "The apps the signed-in user allowed",
              {200: _HTML, 303: "See other (303)"},
              parameters=({"name": "done", "in": "query", "required": False,
                           "schema": {"type": "string"}},),
              tag="ui", page=True),
    RouteSpec("POST", f"{HERE}/revoke", revoke, "Revoke an app's access (its consent)",
              {303: "See other (303)", 403: _HTML, 404: _HTML},
              request={"type": "object", "properties": {}},
              media_type="application/x-www-form-urlencoded", tag="ui", page=True),
]  # fmt: skip
"""The connected-apps routes of the account page (docs/reference/accounts.md)."""
