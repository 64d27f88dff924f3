"""RFC 9457 problem details: the one place where errors become HTTP statuses and bodies."""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from domain import errors as d

PROBLEM_JSON = "application/problem+json"

STATUS_BY_ERROR: dict[type[d.DomainError], int] = {
    d.ValidationFailed: 422,
    d.InvalidCredentials: 401,
    d.InvalidToken: 401,
    d.InvalidRefreshToken: 401,
    d.Forbidden: 403,
    d.InvalidOldPassword: 403,
    d.ReauthenticationRequired: 401,
    d.AccountDisabled: 403,
    d.EmailNotVerified: 403,
    d.MfaRequired: 401,
    d.InvalidMfaCode: 401,
    d.InvalidResetToken: 400,
    d.InvalidVerificationToken: 400,
    d.InvalidInvitation: 400,
    d.InvalidCeremony: 400,
    d.InvalidPasskey: 400,
    d.PasskeyExists: 409,
    d.PasskeyLoginFailed: 401,
    d.FederationFailed: 400,
    d.AccountExists: 409,
    d.FederationNotAllowed: 403,
    d.LastLoginMethod: 409,
    d.NotFound: 404,
    d.EmailTaken: 409,
    d.RegistrationClosed: 403,
    d.Conflict: 409,
    d.LastSuperadmin: 409,
    d.RateLimited: 429,
    d.StorageFault: 503,
}
"""docs/reference/operations.md: domain error class → HTTP status."""

_TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    409: "Conflict",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    422: "Unprocessable Content",
    429: "Too Many Requests",
    500: "Internal Server Error",
    501: "Not Implemented",
    503: "Service Unavailable",
}


class HttpProblem(Exception):
    """An error that only exists at the HTTP edge (e.g. a body that is not JSON).

    ``close``: the connection closes after the answer (e.g. 408, whose body was not all read).
    """

    def __init__(self, status: int, code: str, detail: str, *, close: bool = False) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.close = close


def problem_body(status: int, code: str, detail: str, extra: dict[str, Any] | None = None) -> bytes:
    """The UTF-8 JSON of a problem: ``{type, title, status, detail, code}`` (+ ``extra``)."""
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": _TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        "code": code,
    }
    if extra:
        body.update(extra)
    return orjson.dumps(body)


def problem_response(
    status: int,
    code: str,
    detail: str,
    *,
    extra: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> web.Response:
    """A problem+json response: ``{type, title, status, detail, code}`` (+ ``extra`` members)."""
    return web.Response(
        body=problem_body(status, code, detail, extra),
        status=status,
        content_type=PROBLEM_JSON,
        headers=headers,
    )


def status_of(error: d.DomainError) -> int:
    """The HTTP status of ``error``: that of the nearest class in its MRO listed in
    ``STATUS_BY_ERROR`` (a subclass answers as its parent), 400 when none is."""
    for kind in type(error).__mro__:
        status = STATUS_BY_ERROR.get(kind)
        if status is not None:
            return status
    return 400


def domain_problem(exc: d.DomainError) -> web.Response:
    """The problem response for a domain error, with RFC 6750 / RFC 9110 headers where due."""
    status = status_of(exc)
    headers: dict[str, str] = {}
    extra: dict[str, Any] = {}
    if isinstance(exc, d.InvalidToken):
        headers["WWW-Authenticate"] = 'Bearer error="invalid_token"'
    if isinstance(exc, d.ReauthenticationRequired):  # RFC 9470 section 3: prove yourself anew
        headers["WWW-Authenticate"] = 'Bearer error="insufficient_user_authentication"'
    if isinstance(exc, d.RateLimited | d.StorageFault):
        headers["Retry-After"] = str(exc.retry_after)
    if isinstance(exc, d.MfaRequired):
        extra["mfa_token"] = exc.mfa_token
    if isinstance(exc, d.ValidationFailed):
        extra["errors"] = [{"field": e.field, "message": e.message} for e in exc.errors]
    return problem_response(status, exc.code, exc.detail, extra=extra, headers=headers)
