"""The device verification pages (RFC 8628 §3.3; docs/reference/oauth-and-oidc.md):
``/ui/device`` — sign in (the hosted login page, coming back here), enter or confirm the user code a
device shows, allow or deny — and ``/ui/device/done``, "return to your device".

A wrong code shows the entry form again (400); too many wrong codes from one address, 429 with
``Retry-After``; the POST is CSRF-checked and answers 303. The decisions and every check are
``application.oauth.device_verification``'s.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from application.oauth.device_verification import (
    DeviceNotAdmitted,
    DeviceRequest,
    UserCodeRefused,
)
from domain.errors import RateLimited
from domain.texts import Text
from entrypoints.http.keys import CONTAINER
from entrypoints.http.pages.routes import SCOPE_WORDS
from entrypoints.http.pages.web import (
    csrf_ok,
    csrf_refused,
    error_page,
    page,
    read_page_form,
    see_other,
    session_cookie,
)
from entrypoints.http.requests import client_address
from entrypoints.http.routing import RouteSpec

DEVICE_PATH = "/ui/device"
_MAX_SHOWN = 32
WRONG_CODE = Text("This code is wrong or has expired. Check it and try again.")


def _address(request: web.Request) -> str:
    return client_address(request, request.app[CONTAINER].config().server.trusted_proxies)


def _login(request: web.Request, user_code: str) -> web.Response:
    """303 to the login page, which comes back to this page with the code."""
    back = DEVICE_PATH + ("?" + urlencode({"user_code": user_code}) if user_code else "")
    return see_other(request, "/ui/login?" + urlencode({"return_to": back}))


def _entry(request: web.Request, user_code: str, error: Text | None, status: int) -> web.Response:
    context = {"user_code": user_code[:_MAX_SHOWN], "error": error}
    return page(request, "device.html", context, status=status)


def _refused(request: web.Request, user_code: str, error: Exception) -> web.Response:
    """The page for a refused lookup: the form again, or the error page."""
    if isinstance(error, RateLimited):
        response = _entry(
            request, user_code,
            Text("Too many wrong codes. Wait {seconds} seconds, then try again.",
                 seconds=error.retry_after), 429,
        )  # fmt: skip
        response.headers["Retry-After"] = str(error.retry_after)
        return response
    if isinstance(error, DeviceNotAdmitted):
        return error_page(
            request, Text("This application does not sign in users of your organization."), 403
        )
    return _entry(request, user_code, WRONG_CODE, 400)


def _confirm(request: web.Request, found: DeviceRequest) -> web.Response:
    client = found.client
    context: dict[str, Any] = {
        "user_code": found.user_code,
        "client_name": client.name,
        "client_org": client.org_id,
        "client_logo": client.logo_uri,
        "policy_uri": client.policy_uri,
        "tos_uri": client.tos_uri,
        "email": found.email,
        "scopes": [SCOPE_WORDS.get(s, s) for s in found.scopes] or [SCOPE_WORDS["openid"]],
    }
    return page(request, "device_confirm.html", context)


async def device_page(request: web.Request) -> web.Response:
    """GET /ui/device[?user_code=] → the login page first (303) when no one is signed in; the
    code form; with a code, the confirmation page (or the form again for a wrong code)."""
    user_code = request.query.get("user_code", "")
    verification = request.app[CONTAINER].device_verification()
    if not user_code:
        if session_cookie(request) is None:
            return _login(request, "")
        return _entry(request, "", None, 200)
    try:
        found = await verification.find(user_code, session_cookie(request), _address(request))
    except (UserCodeRefused, DeviceNotAdmitted, RateLimited) as e:
        return _refused(request, user_code, e)
    if found is None:
        return _login(request, user_code)
    return _confirm(request, found)


async def decide(request: web.Request) -> web.Response:
    """POST /ui/device ``user_code``, ``decision`` (``allow`` | ``deny``), ``csrf_token`` → 303
    to /ui/device/done; the login page when the session ended meanwhile."""
    form = await read_page_form(request)
    if form is None or not csrf_ok(request, form):
        return csrf_refused(request)
    decision = form.get("decision")
    user_code = form.get("user_code", "")
    if decision not in ("allow", "deny"):
        return error_page(request, Text("This request is not valid."))
    verification = request.app[CONTAINER].device_verification()
    try:
        stored = await verification.decide(
            user_code, session_cookie(request), _address(request), decision == "allow"
        )
    except (UserCodeRefused, DeviceNotAdmitted, RateLimited) as e:
        return _refused(request, user_code, e)
    if stored is None:
        return _login(request, user_code)
    if not stored:
        return _entry(request, "", Text("This code was used already."), 409)
    result = "approved" if decision == "allow" else "denied"
    return see_other(request, f"{DEVICE_PATH}/done?result={result}")


async def done_page(request: web.Request) -> web.Response:
    """GET /ui/device/done?result=approved|denied → "return to your device"."""
    return page(
        request, "device_done.html", {"approved": request.query.get("result") == "approved"}
    )


_HTML = "HTML page"
_FORM = "application/x-www-form-urlencoded"
_CODE = {"name": "user_code", "in": "query", "required": False, "schema": {"type": "string"}}
_RESULT = {"name": "result", "in": "query", "required": False,
           "schema": {"enum": ["approved", "denied"]}}  # fmt: skip

ROUTES = [
    RouteSpec("GET", DEVICE_PATH, device_page, "Connect a device: enter or confirm its code",
              {200: _HTML, 303: "See other (303): the login page", 400: _HTML, 403: _HTML,
               429: _HTML},
              parameters=(_CODE,), tag="ui", page=True),
    RouteSpec("POST", DEVICE_PATH, decide, "Allow or deny a device",
              {303: "See other (303)", 400: _HTML, 403: _HTML, 409: _HTML, 429: _HTML},
              request={"type": "object", "properties": {}}, media_type=_FORM, tag="ui",
              page=True),
    RouteSpec("GET", DEVICE_PATH + "/done", done_page, "Return to your device",
              {200: _HTML}, parameters=(_RESULT,), tag="ui", page=True),
]  # fmt: skip
"""The device verification pages of docs/reference/oauth-and-oidc.md."""
