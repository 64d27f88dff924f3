"""Who is calling: the request's bearer access token (RFC 6750) turned into the authenticated
caller, in one place for every route module (docs/reference/tokens-and-sessions.md and
docs/reference/operations.md).

:func:`authenticated` verifies the ``Authorization: Bearer`` token and loads its user afresh
(``AuthService.authenticate``) once per request, keeping the result on the request;
:func:`principal` is that caller as the ``domain.policy.Principal`` the use cases ask the
policy about. A missing, malformed, expired or foreign token, or
one whose user is gone, raises ``InvalidToken``: the problem middleware answers 401
``invalid_token`` with ``WWW-Authenticate: Bearer error="invalid_token"``.
(The one exception to "loaded afresh", the token's claims alone for the actuator's health
details while the database is down, is ``entrypoints.actuator.claimed_principal``.)
"""

from __future__ import annotations

from aiohttp import web

from application.login.auth import Authenticated
from domain.policy import Principal
from entrypoints.http.bearer import bearer_token
from entrypoints.http.keys import CONTAINER

CALLER: web.RequestKey[Authenticated] = web.RequestKey("caller")
"""The request's authenticated caller, once :func:`authenticated` has run."""


async def authenticated(request: web.Request) -> Authenticated:
    """The caller behind the request's bearer token: its user as stored now and the token's
    claims. Verified and loaded on the first call; later calls for the same request reuse it.

    Raises ``InvalidToken`` (401) for a missing or bad token or a user that no longer exists;
    storage errors pass through unchanged.
    """
    caller = request.get(CALLER)
    if caller is None:
        auth = request.app[CONTAINER].auth_service()
        caller = await auth.authenticate(bearer_token(request))
        request[CALLER] = caller
    return caller


async def principal(request: web.Request) -> Principal:
    """The caller as a ``Principal`` built from its freshly loaded user record (never from the
    token's claims, so a role change applies to the next request). Raises like
    :func:`authenticated`."""
    return Principal.of((await authenticated(request)).user)
