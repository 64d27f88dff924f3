"""Who is calling: the request's bearer access token (RFC 6750) turned into the authenticated
caller, in one place for every route module (docs/reference/tokens-and-sessions.md and
docs/reference/operations.md).

:func:`authenticated` verifies the ``Authorization: Bearer`` token and loads its user afresh
(``AuthService.authenticate``) once per request, keeping the result on the request;
:func:`principal` is that caller as the ``domain.policy.Principal`` the use cases and the
actuator's authorizer ask the policy about. A missing, malformed, expired or foreign token, or
one whose user is gone, raises ``InvalidToken``: the problem middleware answers 401
``invalid_token`` with ``WWW-Authenticate: Bearer error="invalid_token"``.

:func:`claimed_principal` is the one exception to "loaded afresh": the verified token's claims
alone, without storage, for decisions that must still work while the database is down.
"""

from __future__ import annotations

from aiohttp import web

from application.login.auth import Authenticated
from domain.model import Role
from domain.policy import Principal
from entrypoints.http.keys import CONTAINER
from entrypoints.http.requests import bearer_token

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


async def claimed_principal(request: web.Request) -> Principal | None:
    """The caller as its verified token's claims describe it (``sub``, ``role``, ``org_id``),
    without touching storage: the role may be up to ``auth.access_token_ttl`` seconds old.

    Only for decisions that must work while the storage is failing (health details). Returns
    None when the ``role`` claim names no role. Raises ``InvalidToken`` for a missing or bad
    token.
    """
    auth = request.app[CONTAINER].auth_service()
    claims = await auth.verify_token(bearer_token(request))
    try:
        role = Role(str(claims.get("role")))
    except ValueError:
        return None
    return Principal(user_id=str(claims["sub"]), role=role, org_id=str(claims.get("org_id", "")))
