"""Login with other identity providers, the browser's side (docs/reference/federation.md):
``/federation/{provider}/start`` and ``/callback``, and the account page's "Link …" and "Unlink"
buttons (the page: ``entrypoints.http.pages.account``; linking itself:
``entrypoints.http.pages.federation_link``).

The start binds its state to this browser with the ``federation`` cookie (256 bits, HttpOnly,
SameSite=Lax so that the provider's redirect back carries it; only its SHA-256 is stored).
A failure of any check shows the login page with one message; nothing was created or linked.
"""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from application.login.federated import ExistingAccount, LoginNeeded
from domain.errors import (
    AccountExists,
    DomainError,
    EmailTaken,
    FederationNotAllowed,
    InvalidInvitation,
    LastLoginMethod,
    NotFound,
    StorageFault,
)
from domain.texts import Text
from entrypoints.http.keys import CONTAINER
from entrypoints.http.pages.account import account_user, login_first, render_account
from entrypoints.http.pages.federation_link import BROWSER as _BROWSER
from entrypoints.http.pages.federation_link import confirm as confirm_link
from entrypoints.http.pages.federation_link import link_offer_page
from entrypoints.http.pages.invitation import LANDING, link_token
from entrypoints.http.pages.invitation import refused as invitation_refused
from entrypoints.http.pages.routes import forgot_url, passkeys_alone, provider_buttons, signed_in
from entrypoints.http.pages.signup import register_url
from entrypoints.http.pages.web import (
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

FAILED = Text("Signing in with {name} did not work. Try again, or sign in another way.")
EXISTS = Text("An account with this email already exists. Sign in with your password or passkey,"
              " then link {name} from your account page.")  # fmt: skip
NOT_ALLOWED = Text("{name} cannot be used to create an account for this email here.")


def login_page_with(request: web.Request, message: str | Text, status: int,
                    return_to: str = "/ui/signed-in", email: str = "") -> web.Response:  # fmt: skip
    """The login page with ``message``, going on to ``return_to``, ``email`` filled in."""
    context: dict[str, Any] = {
        "return_to": return_to, "email": email, "error": message,
        "forgot_url": forgot_url(return_to), "passkeys": passkeys_alone(request),
        "providers": provider_buttons(request, return_to),
        "register_url": register_url(request, return_to),
    }  # fmt: skip
    return page(request, "login.html", context, status=status)


def _name(request: web.Request, provider_id: str) -> str:
    provider = request.app[CONTAINER].federation_settings().current.provider(provider_id)
    return provider.name if provider is not None else "this provider"


async def start(request: web.Request) -> web.Response:
    """GET /federation/{provider}/start?return_to=<path> → 303 to the provider (the browser
    cookie set); 404 for an unknown or disabled provider. A link never starts here (a GET
    anyone's page can send): ``link=1`` → 303 to /ui/account, whose POST starts it."""
    if request.query.get("link") is not None:
        return see_other(request, "/ui/account")
    return await begin_at_provider(request, request.match_info["provider"][:64],
                                   request.query.get("return_to"), link=False)  # fmt: skip


async def begin_at_provider(
    request: web.Request, provider_id: str, return_to_param: str | None, link: bool,
    invitation_hash: str | None = None,
) -> web.Response:  # fmt: skip
    """Start a login (or, with ``link``, a link for the hosted session's user; with
    ``invitation_hash``, the acceptance of that invitation) at the provider: 303 there with
    the browser cookie set; linking without a recent hosted login → 303 to /ui/login and back
    to /ui/account; 404 for an unknown or disabled provider."""
    container = request.app[CONTAINER]
    return_to = safe_return_to(return_to_param) or ("/ui/account" if link else "/ui/signed-in")
    browser = request.cookies.get(cookie_name(request, _BROWSER), "")
    if len(browser) != 43:
        browser = secrets.token_urlsafe(32)
    try:
        url = await container.federated_login().begin(
            provider_id,
            return_to,
            browser,
            (session_cookie(request) or "") if link else None,
            invitation_hash,
        )
    except NotFound:
        return error_page(request, Text("There is no such sign-in provider."), 404)
    except LoginNeeded:
        return see_other(request, "/ui/login?" + urlencode({"return_to": "/ui/account"}))
    except StorageFault:
        raise  # no refusal: the problem middleware's 503
    except DomainError:
        return login_page_with(request, FAILED.filled(name=_name(request, provider_id)), 400,
                               return_to)  # fmt: skip
    response = see_other(request, url)
    ttl = container.federation_settings().current.state_ttl
    set_cookie(response, request, _BROWSER, browser, max_age=ttl)
    return response


async def invitation_start(request: web.Request) -> web.Response:
    """POST /ui/invitation/federation ``token``, ``provider``, ``csrf_token`` (the invitation
    page's "Continue with …") → 303 to the provider for a login that accepts the invitation
    (docs/reference/invitations.md), landing on /ui/account; the "not valid" page (400) for a
    bad, expired, revoked or used link; 404 for an unknown provider; 403 on CSRF."""
    form = await read_page_form(request)
    if form is None or not csrf_ok(request, form):
        return csrf_refused(request)
    acceptance = request.app[CONTAINER].invitation_acceptance()
    try:
        invitation = await acceptance.open(link_token(form.get("token")))
    except InvalidInvitation as e:
        return invitation_refused(request, e)
    return await begin_at_provider(request, form.get("provider", "")[:64], LANDING, link=False,
                                   invitation_hash=invitation.token_hash)  # fmt: skip


async def callback(request: web.Request) -> web.Response:
    """GET /federation/{provider}/callback?code&state&iss (or error) → 303 to ``return_to``
    signed in (or linked), 303 to the second step for a user with MFA on; the login page
    with one message on any failure; 404 for an unknown or disabled provider."""
    container = request.app[CONTAINER]
    provider_id = request.match_info["provider"][:64]
    query = {k: request.query.get(k, "") for k in ("code", "state", "iss", "error")
             if k in request.query}  # fmt: skip
    address = client_address(request, container.config().server.trusted_proxies)
    browser = request.cookies.get(cookie_name(request, _BROWSER))
    hosted = container.hosted_login()
    name = _name(request, provider_id)
    try:
        result = await container.federated_login().callback_with(
            provider_id, query, browser, address,
            hosted.start(user_agent(request), address, None, session_cookie(request)),
        )  # fmt: skip
    except NotFound:
        return error_page(request, Text("There is no such sign-in provider."), 404)
    except ExistingAccount as e:  # the login page resumes where this attempt was heading
        return_to = safe_return_to(e.return_to) or "/ui/signed-in"
        return login_page_with(request, EXISTS.filled(name=name), 409, return_to, e.email or "")
    except (InvalidInvitation, EmailTaken) as e:
        return invitation_refused(request, e)
    except AccountExists:
        return login_page_with(request, EXISTS.filled(name=name), 409)
    except FederationNotAllowed:
        return login_page_with(request, NOT_ALLOWED.filled(name=name), 403)
    except StorageFault:
        raise  # no refusal: the problem middleware's 503
    except DomainError:
        return login_page_with(request, FAILED.filled(name=name), 400)
    if result.mfa_token is not None:
        response = see_other(request, "/ui/login/mfa?" + urlencode({"return_to": result.return_to}))
        ttl = container.auth_settings().current.mfa_token_ttl
        set_cookie(response, request, "mfa", result.mfa_token, max_age=ttl)
        return response
    if result.started is not None:
        return signed_in(request, result.return_to, result.started)
    if result.link_offer is not None:
        return await link_offer_page(request, result.link_offer)
    return see_other(request, result.return_to)


async def link(request: web.Request) -> web.Response:
    """POST /ui/account/link ``provider``, ``csrf_token`` → 303 to the provider to link it
    (the hosted login must be at most ``federation.link_max_age`` old, else 303 to /ui/login
    and back to /ui/account); 403 on a CSRF failure; 404 for an unknown provider."""
    form = await read_page_form(request)
    if form is None or not csrf_ok(request, form):
        return csrf_refused(request)
    return await begin_at_provider(request, form.get("provider", "")[:64], "/ui/account",
                                   link=True)  # fmt: skip


async def unlink(request: web.Request) -> web.Response:
    """POST /ui/account/unlink ``provider``, ``csrf_token`` → 303 to /ui/account; 409 the page
    with a message when it is the last way to sign in."""
    form = await read_page_form(request)
    if form is None or not csrf_ok(request, form):
        return csrf_refused(request)
    container = request.app[CONTAINER]
    found = await account_user(request)
    if found is None:
        return login_first(request, "/ui/account")
    try:
        await container.own_identities().unlink(found[0].id, form.get("provider", "")[:64])
    except LastLoginMethod:
        return await render_account(request, "last_login_method", 409)
    except StorageFault:
        raise  # no refusal: the problem middleware's 503
    except DomainError:
        return await render_account(request, "nothing_to_unlink", 404)
    return see_other(request, "/ui/account")


_HTML = "HTML page"
_PROVIDER = ({"name": "provider", "in": "path", "required": True,
              "schema": {"type": "string", "minLength": 1}},)  # fmt: skip

ROUTES = [
    RouteSpec("GET", "/federation/{provider}/start", start,
              "Start signing in (or linking) with an identity provider",
              {303: "See other (303)", 400: _HTML, 404: _HTML, 429: _HTML},
              parameters=_PROVIDER, tag="ui", page=True),
    RouteSpec("GET", "/federation/{provider}/callback", callback,
              "The identity provider's redirect back",
              {200: _HTML, 303: "See other (303)", 400: _HTML, 403: _HTML, 404: _HTML,
               409: _HTML}, parameters=_PROVIDER, tag="ui", page=True),
    RouteSpec("POST", "/ui/invitation/federation", invitation_start,
              "Accept an invitation by signing in with an identity provider",
              {303: "See other (303)", 400: _HTML, 403: _HTML, 404: _HTML, 429: _HTML},
              request={"type": "object", "properties": {}},
              media_type="application/x-www-form-urlencoded", tag="ui", page=True),
    RouteSpec("POST", "/ui/account/link", link, "Start linking an identity provider",
              {303: "See other (303)", 400: _HTML, 403: _HTML, 404: _HTML},
              request={"type": "object", "properties": {}},
              media_type="application/x-www-form-urlencoded", tag="ui", page=True),
    RouteSpec("POST", "/ui/account/link/confirm", confirm_link,
              "Confirm (or cancel) linking an identity provider",
              {303: "See other (303)", 400: _HTML, 403: _HTML, 409: _HTML},
              request={"type": "object", "properties": {}},
              media_type="application/x-www-form-urlencoded", tag="ui", page=True),
    RouteSpec("POST", "/ui/account/unlink", unlink, "Unlink an identity provider",
              {303: "See other (303)", 403: _HTML, 404: _HTML, 409: _HTML},
              request={"type": "object", "properties": {}},
              media_type="application/x-www-form-urlencoded", tag="ui", page=True),
]  # fmt: skip
"""The browser routes of docs/reference/federation.md."""
