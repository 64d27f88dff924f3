"""Writes from anyone, limited per client address at the HTTP edge (docs/reference/operations.md,
ADR 0028): the routes that anyone may call and that write, and the middleware that draws a
token per request from ``application.shared.address_limit.AddressRateLimiter``.

Past the limit the answer is 429 ``rate_limited`` with ``Retry-After`` (seconds), given before
the handler runs: nothing is read or written. On the OAuth endpoints
(docs/reference/oauth-and-oidc.md) the body is RFC 6749 §5.2 JSON (``{"error": "rate_limited",
"error_description"}``), elsewhere problem+json. The client address is the one the audit log records
(``server.trusted_proxies`` applied, ``entrypoints.http.requests.client_address``).
"""

from __future__ import annotations

import attrs
from aiohttp import web

from application.oauth.grants import OAuthError
from entrypoints.http.keys import CONTAINER
from entrypoints.http.oauth_routes import oauth_error
from entrypoints.http.problems import Handler, problem_response
from entrypoints.http.requests import client_address
from entrypoints.http.ui.web import error_page


@attrs.frozen
class AnonymousWrite:
    """How a route is limited: ``give_back`` — its success proves a credential (a password, a
    code, a token sent by email, a client secret), so a request that succeeds (status < 400)
    returns its token and only what anyone can send is counted; ``oauth`` — answer in RFC 6749
    JSON; ``page`` — a hosted page's form (docs/reference/oauth-and-oidc.md): answer with the error
    page."""

    give_back: bool
    oauth: bool = False
    page: bool = False


ANONYMOUS_WRITES: dict[tuple[str, str], AnonymousWrite] = {
    ("POST", "/register"): AnonymousWrite(give_back=False),
    ("POST", "/login"): AnonymousWrite(give_back=True),
    ("POST", "/login/mfa"): AnonymousWrite(give_back=True),
    ("POST", "/login/passkey/options"): AnonymousWrite(give_back=False),
    ("POST", "/login/passkey"): AnonymousWrite(give_back=True),
    ("POST", "/login/federated"): AnonymousWrite(give_back=True),
    ("POST", "/password/forgot"): AnonymousWrite(give_back=False),
    ("POST", "/password/reset"): AnonymousWrite(give_back=True),
    ("POST", "/email/verify"): AnonymousWrite(give_back=True),
    ("POST", "/oauth/token"): AnonymousWrite(give_back=True, oauth=True),
    ("POST", "/oauth/revoke"): AnonymousWrite(give_back=True, oauth=True),
    ("POST", "/oauth/introspect"): AnonymousWrite(give_back=True, oauth=True),
    ("POST", "/ui/login"): AnonymousWrite(give_back=True, page=True),
    ("POST", "/ui/login/mfa"): AnonymousWrite(give_back=True, page=True),
    ("POST", "/ui/forgot"): AnonymousWrite(give_back=False, page=True),
    ("POST", "/ui/reset"): AnonymousWrite(give_back=True, page=True),
    ("POST", "/ui/verify"): AnonymousWrite(give_back=True, page=True),
    ("POST", "/ui/login/passkey"): AnonymousWrite(give_back=True),
    ("POST", "/ui/login/mfa/passkey/options"): AnonymousWrite(give_back=False),
    ("POST", "/ui/login/mfa/passkey"): AnonymousWrite(give_back=True),
    ("GET", "/federation/{provider}/start"): AnonymousWrite(give_back=False, page=True),
}
"""(method, path template) → how the route is limited: every route that anyone may call and
that writes (a user, a ceremony, a reset or verification record, a failed-login or failed
client-authentication audit row, a started federated login's state)."""

_DETAIL = "too many requests from this address; retry after the given seconds"


def _refusal(request: web.Request, route: AnonymousWrite, retry_after: int) -> web.Response:
    if route.page:
        message = (
            f"Too many requests from your network. Wait {retry_after} seconds, then try again."
        )
        response = error_page(request, message, 429)
        response.headers["Retry-After"] = str(retry_after)
        return response
    if route.oauth:  # the OAuth endpoints' own error form (no-store headers included)
        response = oauth_error(OAuthError("rate_limited", _DETAIL, status=429))
        response.headers["Retry-After"] = str(retry_after)
        return response
    return problem_response(429, "rate_limited", _DETAIL, headers={"Retry-After": str(retry_after)})


@web.middleware
async def anonymous_write_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Draw a token for a request to a route of ``ANONYMOUS_WRITES`` from its client address's
    bucket (the container's ``anonymous_write_limiter``); answer 429 when there is none; give
    it back after a success on a ``give_back`` route. Other requests pass untouched."""
    resource = request.match_info.route.resource
    path = resource.canonical if resource is not None else None
    route = ANONYMOUS_WRITES.get((request.method, path)) if path is not None else None
    if route is None:
        return await handler(request)
    container = request.app[CONTAINER]
    limiter = container.anonymous_write_limiter()
    address = client_address(request, container.config().server.trusted_proxies)
    retry_after = limiter.take(address)
    if retry_after is not None:
        return _refusal(request, route, retry_after)
    response = await handler(request)
    if route.give_back and response.status < 400:
        limiter.give_back(address)
    return response


__all__ = ["ANONYMOUS_WRITES", "AnonymousWrite", "anonymous_write_middleware"]
