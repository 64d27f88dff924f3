"""Writes from anyone, limited per client address at the HTTP edge (docs/reference/operations.md,
ADR 0028): the routes that anyone may call and that write; ``entrypoints.http.middlewares`` draws a
token per request from ``application.shared.address_limit.AddressRateLimiter``.

Past the limit the answer is 429 ``rate_limited`` with ``Retry-After`` (seconds), given before
the handler runs: nothing is read or written. On the OAuth endpoints
(docs/reference/oauth-and-oidc.md) the body is RFC 6749 §5.2 JSON (``{"error": "rate_limited",
"error_description"}``), elsewhere problem+json. The client address is the one the audit log records
(``server.trusted_proxies`` applied, ``entrypoints.http.requests.client_address``).
"""

from __future__ import annotations

import attrs


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
    ("POST", "/oauth/device_authorization"): AnonymousWrite(give_back=False, oauth=True),
    ("POST", "/oauth/par"): AnonymousWrite(give_back=False, oauth=True),
    ("POST", "/ui/login"): AnonymousWrite(give_back=True, page=True),
    ("POST", "/ui/login/mfa"): AnonymousWrite(give_back=True, page=True),
    ("POST", "/ui/register"): AnonymousWrite(give_back=False, page=True),
    ("POST", "/ui/forgot"): AnonymousWrite(give_back=False, page=True),
    ("POST", "/ui/reset"): AnonymousWrite(give_back=True, page=True),
    ("POST", "/ui/verify"): AnonymousWrite(give_back=True, page=True),
    ("POST", "/ui/invitation"): AnonymousWrite(give_back=True, page=True),
    ("POST", "/ui/invitation/federation"): AnonymousWrite(give_back=False, page=True),
    ("POST", "/ui/login/passkey"): AnonymousWrite(give_back=True),
    ("POST", "/ui/login/mfa/passkey/options"): AnonymousWrite(give_back=False),
    ("POST", "/ui/login/mfa/passkey"): AnonymousWrite(give_back=True),
    ("GET", "/federation/{provider}/start"): AnonymousWrite(give_back=False, page=True),
    ("GET", "/ui/device"): AnonymousWrite(give_back=True, page=True),
    ("POST", "/ui/device"): AnonymousWrite(give_back=True, page=True),
}
"""(method, path template) → how the route is limited: every route that anyone may call and
that writes (a user, a ceremony, a reset or verification record, a failed-login or failed
client-authentication audit row, a started federated login's state, an account from an
invitation link, a device authorization request, a wrong user code's audit row)."""


__all__ = ["ANONYMOUS_WRITES", "AnonymousWrite"]
