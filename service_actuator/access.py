"""Access to the actuator: the :data:`Authorizer` a service injects and its :class:`Access` verdict.

The actuator never looks inside a request: it hands the framework's request object and the
:data:`Action` to the authorizer, and :func:`authorize` turns whatever the authorizer answers
(or raises) into one :class:`Access`. Refusals become RFC 9457 problems: 401 ``invalid_token``
and 403 ``forbidden`` (see ``service_actuator.responses``).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import Any, Literal, TypeAlias, cast

from service_actuator.errors import AccessDenied, AuthenticationRequired

__all__ = ["Access", "Action", "Authorizer", "AuthorizerResult", "authorize"]


class Access(StrEnum):
    """An :data:`Authorizer`'s verdict; plain strings ``"ok"`` etc. are accepted too."""

    OK = "ok"
    UNAUTHENTICATED = "unauthenticated"  # 401 invalid_token
    FORBIDDEN = "forbidden"  # 403 forbidden


Action: TypeAlias = Literal["health_details", "metrics", "refresh"]
"""What the caller wants: see health details, read metrics (when required), refresh config."""

AuthorizerResult: TypeAlias = Access | Literal["ok", "unauthenticated", "forbidden"] | bool

Authorizer: TypeAlias = Callable[[Any, Action], AuthorizerResult | Awaitable[AuthorizerResult]]
"""``authorizer(request, action)``, sync or async, decides whether the caller may do ``action``.

Returns an :class:`Access` (or its string), or a bool: True is ``ok``, False is
``unauthenticated``. It may instead raise ``AuthenticationRequired`` (401) or ``AccessDenied``
(403). For ``"health_details"`` anything but ``ok`` (including any exception) just hides details.
Without an authorizer nobody is authorized: ``when_authorized`` shows nothing and
``/refresh`` answers 403.
"""


async def authorize(authorizer: Authorizer | None, request: Any, action: Action) -> Access:
    """Ask ``authorizer`` whether the caller behind ``request`` may do ``action``.

    Returns:
        The verdict: True is ``OK``, False ``UNAUTHENTICATED``; ``AuthenticationRequired`` raised
        is ``UNAUTHENTICATED``, ``AccessDenied`` raised is ``FORBIDDEN``; no authorizer is
        ``FORBIDDEN``.

    Raises:
        TypeError: the authorizer answered something else.
        Exception: any other exception the authorizer raises, unchanged.
    """
    if authorizer is None:
        return Access.FORBIDDEN
    try:
        verdict = authorizer(request, action)
        if inspect.isawaitable(verdict):
            verdict = await verdict
    except AuthenticationRequired:
        return Access.UNAUTHENTICATED
    except AccessDenied:
        return Access.FORBIDDEN
    if verdict is True:
        return Access.OK
    if verdict is False:
        return Access.UNAUTHENTICATED
    try:
        return Access(cast(str, verdict))
    except ValueError:
        raise TypeError(f"authorizer returned {verdict!r}") from None
