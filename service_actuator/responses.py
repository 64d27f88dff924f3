"""Framework-neutral HTTP responses, and the RFC 9457 problems the actuator answers with.

Every :class:`~service_actuator.core.Actuator` handler returns an :class:`ActuatorResponse`;
``service_actuator.aiohttp`` turns it into an aiohttp response. Errors are problem details
(RFC 9457, ``application/problem+json``) with a machine-readable ``code`` member:

======  ==========================  ==================================================
status  ``code``                    when
======  ==========================  ==================================================
401     ``invalid_token``           the authorizer wants credentials
403     ``forbidden``               the authorizer refuses, or there is none
406     ``not_acceptable``          ``Accept`` allows no metrics format (RFC 9110)
422     ``invalid_configuration``   the reloader raised ``InvalidConfiguration``
501     ``metrics_unavailable``     prometheus-client is not installed
501     ``refresh_unavailable``     no reloader was given
======  ==========================  ==================================================
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from service_actuator.errors import InvalidConfiguration

__all__ = [
    "JSON_TYPE",
    "PROBLEM_TYPE",
    "ActuatorResponse",
    "forbidden",
    "invalid_configuration",
    "json_response",
    "metrics_unavailable",
    "not_acceptable",
    "problem",
    "refresh_unavailable",
    "unauthenticated",
]

JSON_TYPE = "application/json"
PROBLEM_TYPE = "application/problem+json"


@dataclass(frozen=True, slots=True)
class ActuatorResponse:
    """A framework-neutral HTTP response.

    Attributes:
        status: HTTP status code.
        content_type: the full ``Content-Type`` header value.
        body: the encoded body.
        headers: further headers.
    """

    status: int
    content_type: str
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        """The body decoded as JSON."""
        return json.loads(self.body)


def _dumps(document: Any) -> bytes:
    return json.dumps(document, ensure_ascii=False, default=str).encode()


def json_response(
    status: int, document: Any, headers: Mapping[str, str] | None = None
) -> ActuatorResponse:
    """``document`` as ``application/json`` (UTF-8, non-ASCII kept; unknown types as ``str``)."""
    return ActuatorResponse(status, JSON_TYPE, _dumps(document), dict(headers or {}))


def problem(
    status: int,
    code: str,
    detail: str,
    *,
    title: str | None = None,
    type_: str = "about:blank",
    headers: Mapping[str, str] | None = None,
    **extensions: Any,
) -> ActuatorResponse:
    """An RFC 9457 problem-details response, ``Content-Type: application/problem+json``.

    Body: ``{"type", "title", "status", "detail", "code", **extensions}``; ``title`` defaults to
    the status phrase.
    """
    document: dict[str, Any] = {
        "type": type_,
        "title": title if title is not None else HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
        "code": code,
        **extensions,
    }
    return ActuatorResponse(status, PROBLEM_TYPE, _dumps(document), dict(headers or {}))


def unauthenticated() -> ActuatorResponse:
    """401 ``invalid_token``, with ``WWW-Authenticate: Bearer error="invalid_token"``."""
    return problem(
        401,
        "invalid_token",
        "A valid bearer token is required.",
        headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
    )


def forbidden(detail: str = "The caller may not perform this operation.") -> ActuatorResponse:
    """403 ``forbidden``."""
    return problem(403, "forbidden", detail)


def not_acceptable(available: Iterable[str], headers: Mapping[str, str]) -> ActuatorResponse:
    """406 ``not_acceptable``, listing the ``available`` content types."""
    supported = ", ".join(available)
    return problem(
        406,
        "not_acceptable",
        f"The Accept header allows no available format; available: {supported}.",
        headers=headers,
    )


def invalid_configuration(exc: InvalidConfiguration) -> ActuatorResponse:
    """422 ``invalid_configuration`` naming the key: members ``key`` and ``errors``."""
    return problem(
        422,
        "invalid_configuration",
        f"Invalid configuration {exc.key}: {exc.message}. Nothing was changed.",
        key=exc.key,
        errors=[{"field": exc.key, "message": exc.message}],
    )


def metrics_unavailable() -> ActuatorResponse:
    """501 ``metrics_unavailable``: prometheus-client (the ``metrics`` extra) is missing."""
    return problem(
        501, "metrics_unavailable", "Metrics need prometheus-client: install the 'metrics' extra."
    )


def refresh_unavailable() -> ActuatorResponse:
    """501 ``refresh_unavailable``: the actuator has no reloader."""
    return problem(501, "refresh_unavailable", "No configuration reloader is configured.")
