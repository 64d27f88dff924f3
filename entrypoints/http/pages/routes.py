"""The hosted login and consent pages (docs/reference/oauth-and-oidc.md): ``/ui/login`` (password),
its second step ``/ui/login/mfa``, ``/ui/consent``, and the stylesheet and passkey script they load.

Every POST is CSRF-checked (``csrf_ok``) and answers 303; a login failure of any cause shows
the same page with one message (status 401), like the JSON API's one answer.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode, urlsplit

from aiohttp import web

from application.oauth.authorize import AuthorizePageError
from application.oauth.interaction import AUTHORIZE_PATH, ConsentNeeded
from domain.errors import DomainError, MfaRequired, RateLimited, StorageFault
from domain.texts import Text
from entrypoints.http.forward_auth import START_PATH, forward_auth_return
from entrypoints.http.keys import CONTAINER
from entrypoints.http.oidc import answer, client_of, not_valid, query_pairs
from entrypoints.http.pages.signup import register_url
from entrypoints.http.pages.web import (
    clear_cookie,
    cookie_name,
    csrf_ok,
    csrf_refused,
    error_page,
    page,
    read_page_form,
    safe_return_to,
    see_other,
    session_cookie,
    set_cookie,
)
from entrypoints.http.requests import client_address, user_agent
from entrypoints.http.routing import RouteSpec

LOGIN_FAILED = Text("The email or password is wrong, or this account cannot sign in now.")
CODE_FAILED = Text("The code is wrong or expired. Sign in again if this keeps happening.")
TOO_MANY = Text("Too many failed attempts. Wait {seconds} seconds, then try again.")
SCOPE_WORDS = {
    "openid": Text("Know who you are"),
    "profile": Text("See your profile (your user name)"),
    "email": Text("See your email address"),
    "offline_access": Text("Stay signed in when you are not using it"),
    "authsvc": Text("See your organization, role and groups"),
}
"""How the consent page words each scope; any other scope is shown by its name."""
NOT_CONSENT = Text("This consent request is not valid.")
_FORM = "application/x-www-form-urlencoded"


def _return_to(request: web.Request, form: dict[str, str] | None = None) -> str:
    """Where the login goes on: a path of this service, or for an absolute URL of a host in
    ``forward_auth.hosts`` the forward-auth start path that returns there
    (docs/reference/forward-auth.md); else /ui/signed-in."""
    raw = (form or {}).get("return_to") if form is not None else request.query.get("return_to")
    return safe_return_to(raw) or forward_auth_return(request, raw) or "/ui/signed-in"


async def login_page(request: web.Request) -> web.Response:
    """GET /ui/login?return_to=<path or listed URL>[&login_hint=] → the sign-in form; a browser
    with a hosted session that comes from a protected host (an absolute ``return_to``) goes on to
    the forward-auth start at once."""
    return_to = _return_to(request)
    if return_to.startswith(START_PATH + "?") and session_cookie(request):
        return see_other(request, return_to)
    context = {
        "return_to": return_to,
        "email": request.query.get("login_hint", ""),
        "forgot_url": forgot_url(return_to),
        "passkeys": passkeys_alone(request),
        "providers": provider_buttons(request, return_to),
        "register_url": register_url(request, return_to),
    }
    return page(request, "login.html", context)


def provider_buttons(request: web.Request, return_to: str) -> list[dict[str, str]]:
    """The "Continue with {name}" buttons: ``{"name", "url"}`` per enabled identity provider
    (docs/reference/federation.md), each starting at ``/federation/{id}/start`` with
    ``return_to``."""
    enabled = request.app[CONTAINER].federation_settings().current.enabled()
    query = urlencode({"return_to": return_to})
    return [{"name": p.name, "url": f"/federation/{p.id}/start?{query}"} for p in enabled]


def forgot_url(return_to: str) -> str:
    """The forgot-password page that comes back to ``return_to`` (the login template's link;
    /ui/forgot also reads it from the login page's ``Referer``)."""
    return "/ui/forgot?" + urlencode({"return_to": return_to})


def passkeys_alone(request: web.Request) -> bool:
    """Whether a passkey alone signs in (``webauthn.passwordless``): the login page offers it
    then; the second step always may."""
    return bool(request.app[CONTAINER].webauthn_settings().current.passwordless)


async def login(request: web.Request) -> web.Response:
    """POST /ui/login ``email``, ``password``, ``csrf_token``, ``return_to`` → 303 to
    ``return_to`` with the hosted-session cookie; 303 to /ui/login/mfa for a second step;
    401 the same page on any failure; 403 on a CSRF failure."""
    form = await read_page_form(request)
    if form is None or not csrf_ok(request, form):
        return csrf_refused(request)
    container = request.app[CONTAINER]
    return_to = _return_to(request, form)
    address = client_address(request, container.config().server.trusted_proxies)
    try:
        cookie = await container.hosted_login().password(
            form.get("email", ""),
            form.get("password", ""),
            address,
            user_agent(request),
            client_of(return_to),
            previous=session_cookie(request),
        )
    except MfaRequired as e:
        response = see_other(request, "/ui/login/mfa?" + urlencode({"return_to": return_to}))
        ttl = container.auth_settings().current.mfa_token_ttl
        set_cookie(response, request, "mfa", e.mfa_token, max_age=ttl)
        return response
    except StorageFault:
        raise  # no refusal: the problem middleware's 503
    except DomainError as e:
        context = {"return_to": return_to, "email": form.get("email", ""), "error": LOGIN_FAILED,
                   "forgot_url": forgot_url(return_to),
                   "passkeys": passkeys_alone(request),
                   "providers": provider_buttons(request, return_to),
                   "register_url": register_url(request, return_to)}  # fmt: skip
        return _refused(request, "login.html", context, e)
    return signed_in(request, return_to, cookie)


def _refused(
    request: web.Request, template: str, context: dict[str, Any], error: DomainError
) -> web.Response:
    """The form again after a failure: 401 with the one message for every cause, or 429 with
    ``Retry-After`` when the JSON API's login throttle refuses (``auth.login_max_failures``;
    the same for a known and an unknown email, so it tells nothing about the account)."""
    if isinstance(error, RateLimited):
        context = {**context, "error": TOO_MANY.filled(seconds=error.retry_after)}
        response = page(request, template, context, status=429)
        response.headers["Retry-After"] = str(error.retry_after)
        return response
    return page(request, template, context, status=401)


def signed_in(request: web.Request, return_to: str, cookie: str) -> web.Response:
    """303 to ``return_to`` setting the hosted session's cookie (a session cookie: the server
    ends it after ``oidc.session_idle_ttl`` unused)."""
    response = see_other(request, return_to)
    set_cookie(response, request, "session", cookie)
    clear_cookie(response, request, "mfa")
    return response


async def mfa_page(request: web.Request) -> web.Response:
    """GET /ui/login/mfa?return_to=<path> → the second-step form."""
    return page(request, "mfa.html", {"return_to": _return_to(request)})


async def mfa(request: web.Request) -> web.Response:
    """POST /ui/login/mfa ``code``, ``csrf_token``, ``return_to`` (the ``mfa_token`` in its
    cookie) → 303 to ``return_to`` signed in; 401 the same page on a failure."""
    form = await read_page_form(request)
    if form is None or not csrf_ok(request, form):
        return csrf_refused(request)
    container = request.app[CONTAINER]
    return_to = _return_to(request, form)
    token = request.cookies.get(cookie_name(request, "mfa"), "")
    address = client_address(request, container.config().server.trusted_proxies)
    try:
        cookie = await container.hosted_login().mfa(
            token, form.get("code", ""), address, user_agent(request), client_of(return_to),
            previous=session_cookie(request),
        )  # fmt: skip
    except StorageFault:
        raise  # no refusal: the problem middleware's 503
    except DomainError as e:
        context = {"return_to": return_to, "error": CODE_FAILED}
        return _refused(request, "mfa.html", context, e)
    return signed_in(request, return_to, cookie)


def _authorize_pairs(return_to: str) -> list[tuple[str, str]] | None:
    parts = urlsplit(return_to)
    return query_pairs(parts.query) if parts.path == AUTHORIZE_PATH else None


async def consent_page(request: web.Request) -> web.Response:
    """GET /ui/consent?return_to=/oauth/authorize?... → the consent page (the request checked
    again); a request that needs no consent (any more) goes on with a 303."""
    return_to = _return_to(request)
    pairs = _authorize_pairs(return_to)
    if pairs is None:
        return error_page(request, NOT_CONSENT)
    try:
        outcome = await request.app[CONTAINER].authorize()(pairs, session_cookie(request))
    except AuthorizePageError as e:
        return error_page(request, not_valid(e.description))
    if not isinstance(outcome, ConsentNeeded):
        return answer(request, outcome)
    client = outcome.request.client
    context = {
        "client_name": client.name,
        "client_org": client.org_id,
        "redirect_host": redirect_host(outcome.request.redirect_uri),
        "email": outcome.email,
        "not_you": outcome.not_you,
        "client_logo": client.logo_uri,
        "policy_uri": client.policy_uri,
        "tos_uri": client.tos_uri,
        "scopes": [SCOPE_WORDS.get(s, s) for s in outcome.request.scopes]
        or [SCOPE_WORDS["openid"]],
        "return_to": return_to,
    }
    return page(request, "consent.html", context)


def redirect_host(uri: str) -> str:
    """Where the consent page says the browser goes next: the redirect URI's host (with its
    port when one is given), or for a private-use scheme (RFC 8252 §7.1) the scheme."""
    parts = urlsplit(uri)
    return parts.netloc.rpartition("@")[2] or f"{parts.scheme}:"


async def consent(request: web.Request) -> web.Response:
    """POST /ui/consent ``decision`` (``allow`` | ``deny``), ``csrf_token``, ``return_to`` →
    303 to the client with a code, or with ``error=access_denied``."""
    form = await read_page_form(request)
    if form is None or not csrf_ok(request, form):
        return csrf_refused(request)
    decision = form.get("decision")
    pairs = _authorize_pairs(_return_to(request, form))
    if pairs is None or decision not in ("allow", "deny"):
        return error_page(request, NOT_CONSENT)
    try:
        outcome = (
            await request.app[CONTAINER]
            .authorize()
            .decide(pairs, session_cookie(request), decision == "allow")
        )
    except AuthorizePageError as e:
        return error_page(request, not_valid(e.description))
    return answer(request, outcome)


async def root(request: web.Request) -> web.Response:
    """GET / → 303 to ``/ui/account`` (which asks for a login first): a person who opens the
    service's address lands on a page, not on a JSON 404."""
    return see_other(request, "/ui/account")


async def signed_in_page(request: web.Request) -> web.Response:
    """GET /ui/signed-in → a page saying the sign-in worked (a login with no ``return_to``)."""
    return page(
        request,
        "message.html",
        {"heading": Text("Signed in"), "message": Text("You are signed in.")},
    )


_HTML = "HTML page"
_FORM_ANY = {"type": "object", "properties": {}}
_POSTED = {303: "See other (303)", 401: _HTML, 403: _HTML}
_RETURN_TO = (
    {"name": "return_to", "in": "query", "required": False, "schema": {"type": "string"}},
)

ROUTES = [
    RouteSpec(
        "GET",
        "/ui/login",
        login_page,
        "The hosted sign-in page",
        {200: _HTML},
        parameters=(
            *_RETURN_TO,
            {"name": "login_hint", "in": "query", "required": False, "schema": {"type": "string"}},
        ),
        tag="ui",
        page=True,
    ),
    RouteSpec(
        "POST",
        "/ui/login",
        login,
        "Sign in with a password (the sign-in form)",
        _POSTED,
        request=_FORM_ANY,
        media_type=_FORM,
        tag="ui",
        page=True,
    ),
    RouteSpec(
        "GET",
        "/ui/login/mfa",
        mfa_page,
        "The second-step page",
        {200: _HTML},
        parameters=_RETURN_TO,
        tag="ui",
        page=True,
    ),
    RouteSpec(
        "POST",
        "/ui/login/mfa",
        mfa,
        "Finish signing in with a code",
        _POSTED,
        request=_FORM_ANY,
        media_type=_FORM,
        tag="ui",
        page=True,
    ),
    RouteSpec(
        "GET",
        "/ui/consent",
        consent_page,
        "The consent page",
        {200: _HTML, 303: "See other (303)", 400: _HTML},
        parameters=_RETURN_TO,
        tag="ui",
        page=True,
    ),
    RouteSpec(
        "POST",
        "/ui/consent",
        consent,
        "Allow or deny a client",
        {**_POSTED, 400: _HTML},
        request=_FORM_ANY,
        media_type=_FORM,
        tag="ui",
        page=True,
    ),
    RouteSpec(
        "GET",
        "/ui/signed-in",
        signed_in_page,
        "The signed-in page",
        {200: _HTML},
        tag="ui",
        page=True,
    ),
    RouteSpec(
        "GET",
        "/",
        root,
        "The service's address: to the account page",
        {303: "See other (303): /ui/account"},
        tag="ui",
        page=True,
    ),
]
"""The hosted pages of docs/reference/oauth-and-oidc.md."""
