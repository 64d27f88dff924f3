"""The OpenID Connect protocol helpers that the protocol routes (``entrypoints.http.oidc_routes``)
and the hosted pages (``entrypoints.http.pages``) share (docs/reference/oauth-and-oidc.md): reading
a front-channel request's parameters, the 303 of an authorize outcome, the client behind a
``return_to``, the signed-out page's words."""

from __future__ import annotations

from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from aiohttp import web

from application.oauth.interaction import ConsentNeeded, LoginNeeded, Redirect
from domain.texts import Text
from entrypoints.http.pages.web import see_other
from entrypoints.http.requests import read_body

__all__ = ["answer", "client_of", "query_pairs", "request_pairs", "signed_out"]

_FORM = "application/x-www-form-urlencoded"
_MAX_PARAMS = 64


def query_pairs(query: str) -> list[tuple[str, str]] | None:
    """The (name, value) pairs of a query string in order, or None when it is not one."""
    try:
        return parse_qsl(query, keep_blank_values=True, max_num_fields=_MAX_PARAMS, errors="strict")
    except (UnicodeDecodeError, ValueError):
        return None


async def request_pairs(request: web.Request) -> list[tuple[str, str]] | None:
    """The parameters of a front-channel request in order: the query of a GET, the form of a
    POST; None when they cannot be read (not a form, not UTF-8, a malformed query)."""
    if request.method == "GET":
        return query_pairs(request.rel_url.raw_query_string)
    if request.content_type != _FORM:
        return None
    raw = await read_body(request)
    try:
        return query_pairs(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def answer(request: web.Request, outcome: Redirect | LoginNeeded | ConsentNeeded) -> web.Response:
    """The 303 of an ``Authorize`` outcome: to the client, the login page or the consent page."""
    if isinstance(outcome, Redirect):
        return see_other(request, outcome.location)
    if isinstance(outcome, LoginNeeded):
        params = [("return_to", outcome.return_to)]
        if outcome.login_hint:
            params.append(("login_hint", outcome.login_hint))
        return see_other(request, "/ui/login?" + urlencode(params, quote_via=quote))
    return see_other(request, "/ui/consent?" + urlencode({"return_to": outcome.return_to}))


def client_of(return_to: str) -> str | None:
    """The ``client_id`` of an authorize ``return_to``, for the audit (None: none)."""
    pairs = query_pairs(urlsplit(return_to).query) or []
    values = [v for k, v in pairs if k == "client_id"]
    return values[0] if len(values) == 1 and len(values[0]) == 32 else None


def signed_out() -> dict[str, Text]:
    """The context of ``message.html`` once a logout ended the hosted session."""
    return {"heading": Text("Signed out"),
            "message": Text("You are signed out. You may close this page.")}  # fmt: skip


def not_valid(description: str) -> Text:
    """The error page's message for an authorization request the service refuses on a page:
    the refusal's ``description`` (RFC 6749 §4.1.2.1's ``error_description``, English) in a
    translated sentence."""
    return Text("This sign-in request is not valid: {description}.", description=description)
