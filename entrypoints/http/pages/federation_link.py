"""Linking another provider from the account page, the browser's side
(``docs/reference/federation.md``; ``application.login.federated_link``): ``POST /ui/account/link``
starts it (the hosted pages' CSRF checks: ``Origin`` and the double-submit ``csrf_token``), the
callback shows the offer — the provider's name and the upstream email — and ``POST
/ui/account/link/confirm`` writes the link only when the user says yes. A cross-site GET can start
nothing."""

from __future__ import annotations

from urllib.parse import urlencode

from aiohttp import web

from application.login.federated import LoginNeeded
from application.login.federated_link import LinkOffer
from domain.errors import Conflict, DomainError, StorageFault
from domain.texts import Text
from entrypoints.http.keys import CONTAINER
from entrypoints.http.pages.web import (
    cookie_name,
    csrf_ok,
    csrf_refused,
    error_page,
    page,
    read_page_form,
    see_other,
    session_cookie,
)

BROWSER = "federation"
"""The cookie binding a started login or link to this browser (``ui.federation``)."""
EXPIRED = Text(
    "This link request expired or was already answered. Start again from your account page."
)
TAKEN = Text(
    "This account of this provider is already linked to another account here, or yours has one."
)


def _name(request: web.Request, provider_id: str) -> str:
    provider = request.app[CONTAINER].federation_settings().current.provider(provider_id)
    return provider.name if provider is not None else provider_id


async def link_offer_page(request: web.Request, offer: LinkOffer) -> web.Response:
    """The confirmation the callback of a link shows (200): who is signed in, the provider's
    name and the upstream email, and "Link" / "Cancel" posting ``offer`` back."""
    found = await request.app[CONTAINER].federated_login().signed_in(session_cookie(request))
    context = {
        "email": "" if found is None else found[0].email,
        "provider_name": _name(request, offer.provider), "upstream_email": offer.email,
        "offer": offer.token,
    }  # fmt: skip
    return page(request, "link.html", context)


async def confirm(request: web.Request) -> web.Response:
    """POST /ui/account/link/confirm ``offer``, ``decision`` (``allow`` | anything else),
    ``csrf_token`` → 303 to /ui/account (linked, or not); 403 on a CSRF failure; 400 for an
    unknown, spent or expired offer, another user's or another browser's; 409 when the
    identity is another user's; 303 to /ui/login without a hosted session."""
    form = await read_page_form(request)
    if form is None or not csrf_ok(request, form):
        return csrf_refused(request)
    container = request.app[CONTAINER]
    browser = request.cookies.get(cookie_name(request, BROWSER))
    accept = form.get("decision") == "allow"
    try:
        back = await container.federated_login().confirm_link(
            form.get("offer", "")[:128], browser, session_cookie(request), accept
        )
    except LoginNeeded:
        return see_other(request, "/ui/login?" + urlencode({"return_to": "/ui/account"}))
    except Conflict:
        return error_page(request, TAKEN, 409)
    except StorageFault:
        raise  # no refusal: the problem middleware's 503
    except DomainError:
        return error_page(request, EXPIRED, 400)
    return see_other(request, back)


__all__ = ["BROWSER", "confirm", "link_offer_page"]
