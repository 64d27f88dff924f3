"""The OpenID Connect provider's protocol routes (docs/reference/oauth-and-oidc.md):
``/oauth/authorize`` (GET and POST), ``/oauth/userinfo`` (GET and POST) and RP-initiated logout
``/oauth/logout`` (GET and POST). The token endpoint's code-flow grants are in ``oauth_routes``;
the helpers these routes share with the hosted pages are ``entrypoints.http.oidc``; the pages
of sign-out are ``entrypoints.http.pages.logout``."""

from __future__ import annotations

from aiohttp import web

from application.oauth.authorize import AuthorizePageError, with_query
from application.oauth.id_tokens import verify_id_token_hint
from application.oauth.userinfo import UserInfoError
from domain.texts import Text
from entrypoints.http.forward_auth import clear_forward_auth_cookie
from entrypoints.http.keys import CONTAINER
from entrypoints.http.oidc import answer, not_valid, request_pairs, signed_out
from entrypoints.http.pages.web import (
    clear_cookie,
    error_page,
    page,
    see_other,
    session_cookie,
)
from entrypoints.http.routing import RouteSpec
from entrypoints.http.views import json_response


async def authorize(request: web.Request) -> web.Response:
    """GET or POST /oauth/authorize (OIDC Core §3.1.2.1) → 303 to the client (``code`` or an
    error, with ``state`` and ``iss``), the login page or the consent page; 400 HTML for a
    missing, unknown or unregistered ``client_id`` / ``redirect_uri``."""
    pairs = await request_pairs(request)
    if pairs is None:
        return error_page(request, Text("The request's parameters cannot be read."))
    try:
        outcome = await request.app[CONTAINER].authorize()(pairs, session_cookie(request))
    except AuthorizePageError as e:
        return error_page(request, not_valid(e.description))
    return answer(request, outcome)


def _userinfo_refusal(error: UserInfoError) -> web.Response:
    challenge = f'{error.scheme} error="{error.error}"'
    if error.status == 401 and error.error == "invalid_token":
        challenge = f'Bearer error="invalid_token", error_description="{error.description}"'
    body = {"error": error.error, "error_description": error.description}
    return json_response(
        body,
        status=error.status,
        headers={"WWW-Authenticate": challenge, "Cache-Control": "no-store"},
    )


async def userinfo(request: web.Request) -> web.Response:
    """GET or POST /oauth/userinfo with ``Authorization: Bearer`` or ``DPoP`` (+ a ``DPoP``
    proof) → 200 the user's claims (OIDC Core §5.3); 401 ``invalid_token`` with
    ``WWW-Authenticate``; 403 ``insufficient_scope``."""
    container = request.app[CONTAINER]
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    scheme = {"bearer": "Bearer", "dpop": "DPoP"}.get(scheme.lower(), "")
    proofs = request.headers.getall("DPoP", [])
    if not scheme or not token.strip() or len(proofs) > 1:
        refusal = UserInfoError(401, "invalid_token", "an access token is required")
        response = _userinfo_refusal(refusal)
        response.headers["WWW-Authenticate"] = 'Bearer realm="authsvc"'
        return response
    issuer = container.auth_settings().current.issuer.rstrip("/")
    try:
        claims = await container.userinfo()(
            scheme,
            token.strip(),
            proofs[0] if proofs else None,
            request.method,
            (issuer + "/oauth/userinfo",),
        )
    except UserInfoError as e:
        return _userinfo_refusal(e)
    return json_response(claims, headers={"Cache-Control": "no-store"})


async def logout(request: web.Request) -> web.Response:
    """GET or POST /oauth/logout (RP-Initiated Logout 1.0 §2): with a valid ``id_token_hint``
    of ours whose ``sub`` (and ``sid``, when present) is the browser's hosted session, end it
    and 303 to a ``post_logout_redirect_uri`` registered for the hint's client (+ ``state``;
    nothing added without one), or show the signed-out page without one; with no valid hint,
    a hint of another user or session, or an unregistered URI, ask for confirmation first (a
    page posting to /ui/logout). A ``client_id`` other than the hint's is an error page."""
    container = request.app[CONTAINER]
    pairs = await request_pairs(request)
    if pairs is None or len({k for k, _ in pairs}) != len(pairs):
        return error_page(request, Text("The logout request's parameters cannot be read."))
    params = dict(pairs)
    hint = params.get("id_token_hint")
    claims = None
    if hint:
        claims = await verify_id_token_hint(
            container.signer(), container.auth_settings().current, hint
        )
    if claims is None:
        return page(request, "logout.html", {})
    client_id = str(claims["azp"])
    if params.get("client_id", client_id) != client_id:
        return error_page(request, Text("client_id does not match the id_token_hint."))
    uri = params.get("post_logout_redirect_uri")
    client = await container.authorize().client(client_id)
    if uri is not None and (client is None or uri not in client.post_logout_redirect_uris):
        return page(request, "logout.html", {})
    ended = await container.hosted_login().logout_with_hint(
        session_cookie(request), client_id, claims.get("sub"), claims.get("sid")
    )
    if not ended:
        return page(request, "logout.html", {})
    if uri is None:
        response = page(request, "message.html", signed_out())
    else:
        state = params.get("state")
        response = see_other(request, with_query(uri, [("state", state)] if state else []))
    clear_cookie(response, request, "session")
    clear_forward_auth_cookie(response, request)
    return response


_HTML = "HTML page"
_SEE_OTHER = "See other (303): to the client, the login or the consent page"
_AUTHORIZE_PARAMS = tuple(
    {"name": n, "in": "query", "required": False, "schema": {"type": "string"}}
    for n in (
        "response_type",
        "client_id",
        "redirect_uri",
        "scope",
        "state",
        "nonce",
        "code_challenge",
        "code_challenge_method",
        "prompt",
        "max_age",
        "login_hint",
        "id_token_hint",
        "acr_values",
        "display",
        "ui_locales",
    )
)
_FORM_ANY = {"type": "object", "properties": {}}
_FORM = "application/x-www-form-urlencoded"
_UI = {200: _HTML, 400: _HTML, 303: _SEE_OTHER}
_USERINFO = {
    200: "UserInfo claims (OIDC Core §5.3.2)",
    401: "invalid_token (RFC 6750 §3.1), with WWW-Authenticate",
    403: "insufficient_scope (RFC 6750 §3.1)",
}
_LOGOUT_PARAMS = tuple(
    {"name": n, "in": "query", "required": False, "schema": {"type": "string"}}
    for n in ("id_token_hint", "client_id", "post_logout_redirect_uri", "state", "ui_locales")
)

ROUTES = [
    RouteSpec(
        "GET",
        "/oauth/authorize",
        authorize,
        "OpenID Connect authorization request",
        _UI,
        parameters=_AUTHORIZE_PARAMS,
        tag="oidc",
        page=True,
    ),
    RouteSpec(
        "POST",
        "/oauth/authorize",
        authorize,
        "OpenID Connect authorization request (form)",
        _UI,
        request=_FORM_ANY,
        media_type=_FORM,
        tag="oidc",
        page=True,
    ),
    RouteSpec(
        "GET", "/oauth/userinfo", userinfo, "The signed-in user's claims", _USERINFO, tag="oidc"
    ),
    RouteSpec(
        "POST", "/oauth/userinfo", userinfo, "The signed-in user's claims", _USERINFO, tag="oidc"
    ),
    RouteSpec(
        "GET",
        "/oauth/logout",
        logout,
        "RP-initiated logout",
        _UI,
        parameters=_LOGOUT_PARAMS,
        tag="oidc",
        page=True,
    ),
    RouteSpec(
        "POST",
        "/oauth/logout",
        logout,
        "RP-initiated logout (form)",
        _UI,
        request=_FORM_ANY,
        media_type=_FORM,
        tag="oidc",
        page=True,
    ),
]
"""The OpenID Connect routes of docs/reference/oauth-and-oidc.md."""

__all__ = ["ROUTES"]
