"""Every middleware of the app in one place (their order is ``entrypoints.http.app.create_app``'s):

- ``tracing_middleware``: one OpenTelemetry SERVER span per request;
- ``anonymous_write_middleware``: the limit on writes from anyone (``ANONYMOUS_WRITES``, ADR 0028);
- ``problem_middleware``: every error as RFC 9457 problem+json (``entrypoints.http.problems``);
- ``page_errors``: on the hosted pages and the console (``/ui/*`` HTML routes only: put on their
  handlers, so the JSON API does not pay for it), a domain error a handler did not answer becomes
  the error page of its status; a storage fault goes on, by type, to the problem middleware (503
  with ``Retry-After``);
- ``request_context_middleware``: the audit log's client address and user agent.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable

import attrs
from aiohttp import web
from aiohttp.typedefs import Middleware
from opentelemetry import propagate
from opentelemetry.trace import SpanKind, StatusCode

from application.events.audit import REQUEST_CONTEXT, RequestContext
from application.oauth.grants import OAuthError
from domain.errors import DomainError, RateLimited, StorageFault
from domain.texts import Text
from entrypoints.http.anonymous_writes import ANONYMOUS_WRITES, AnonymousWrite
from entrypoints.http.keys import CONTAINER
from entrypoints.http.oauth_routes import oauth_error
from entrypoints.http.pages.web import error_page, refusal_message
from entrypoints.http.problems import HttpProblem, domain_problem, problem_response, status_of
from entrypoints.http.requests import client_address, user_agent
from entrypoints.http.routing import Handler, RouteSpec
from entrypoints.telemetry import Telemetry

__all__ = [
    "anonymous_write_middleware",
    "page_errors",
    "problem_middleware",
    "request_context_middleware",
    "tracing_middleware",
]

log = logging.getLogger("authsvc.http")


def _route_of(request: web.Request) -> str | None:
    resource = request.match_info.route.resource
    return None if resource is None else resource.canonical


# --------------------------------------------------------------------------- tracing


def tracing_middleware(telemetry: Telemetry) -> Middleware:
    """An aiohttp middleware opening one SERVER span per request.

    Span name ``"<METHOD> <route template>"`` (``"<METHOD>"`` for unmatched requests), per the
    OpenTelemetry HTTP semantic conventions; attributes ``http.request.method``, ``http.route``
    (matched requests only) and ``http.response.status_code``; status ERROR for 5xx and for
    exceptions (attribute ``error.type`` = the class name). A W3C ``traceparent`` header is
    honoured as the parent. Put it outside the problem middleware so the final status is seen.
    """

    @web.middleware
    async def trace_request(request: web.Request, handler: Handler) -> web.StreamResponse:
        if not telemetry.recording:
            return await handler(request)
        route = _route_of(request)
        method = request.method
        name = f"{method} {route}" if route else method
        attributes: dict[str, str | int] = {"http.request.method": method}
        if route:
            attributes["http.route"] = route
        context = propagate.extract(request.headers)
        with telemetry.tracer.start_as_current_span(
            name,
            context=context,
            kind=SpanKind.SERVER,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                response = await handler(request)
            except web.HTTPException as exc:
                span.set_attribute("http.response.status_code", exc.status)
                if exc.status >= 500:
                    span.set_status(StatusCode.ERROR)
                    span.set_attribute("error.type", str(exc.status))
                raise
            except Exception as exc:
                span.set_attribute("error.type", type(exc).__qualname__)
                span.set_status(StatusCode.ERROR)
                raise
            span.set_attribute("http.response.status_code", response.status)
            if response.status >= 500:
                span.set_status(StatusCode.ERROR)
                span.set_attribute("error.type", str(response.status))
            return response

    return trace_request


# --------------------------------------------------------------------------- writes from anyone

_DETAIL = "too many requests from this address; retry after the given seconds"


def _refusal(request: web.Request, route: AnonymousWrite, retry_after: int) -> web.Response:
    if route.page:
        message = Text(
            "Too many requests from your network. Wait {seconds} seconds, then try again.",
            seconds=retry_after,
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
    path = _route_of(request)
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


# --------------------------------------------------------------------------- problem+json

_HTTP_CODES = {
    404: "not_found",
    405: "method_not_allowed",
    413: "body_too_large",
    415: "unsupported_media_type",
}


@web.middleware
async def problem_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Map every error to problem+json: domain errors by ``status_of`` (``STATUS_BY_ERROR``),
    aiohttp's own (404, 405, 413 ...) by status, anything unexpected to a logged 500 without
    internals."""
    try:
        return await handler(request)
    except DomainError as exc:
        return domain_problem(exc)
    except HttpProblem as exc:
        response = problem_response(exc.status, exc.code, exc.detail)
        if exc.close:
            response.force_close()
        return response
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code = _HTTP_CODES.get(exc.status, "http_error")
        detail = exc.text or exc.reason
        if exc.status == 413:
            detail = "request body is larger than server.max_body_bytes"
        headers = {k: v for k, v in exc.headers.items() if k.lower() == "allow"}
        return problem_response(exc.status, code, detail, headers=headers)
    except Exception:
        log.exception("unhandled error on %s %s", request.method, request.path)
        return problem_response(500, "internal_error", "an unexpected error occurred")


# --------------------------------------------------------------------------- hosted pages


def page_errors(specs: Iterable[RouteSpec]) -> list[RouteSpec]:
    """``specs`` with the error page put around each HTML route under ``/ui/`` (``page=True``):
    a ``StorageFault`` is raised on, to the problem middleware (503, ``Retry-After``: the
    service is away, no refusal); any other ``DomainError`` the handler let through becomes
    ``error.html`` with the status ``status_of`` gives and a plain message
    (``refusal_message``; ``Retry-After`` on a 429). Other routes (the JSON API, the passkey
    pages' JSON calls) are returned as they are: a middleware of the pages only, put on their
    handlers when the routes are added, so a JSON request pays nothing for it."""
    return [
        attrs.evolve(spec, handler=_answer_page_errors(spec.handler))
        if spec.page and spec.path.startswith("/ui/")
        else spec
        for spec in specs
    ]


def _answer_page_errors(handler: Handler) -> Handler:
    @functools.wraps(handler)
    async def answer_page_errors(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except StorageFault:
            raise
        except DomainError as error:
            status = status_of(error)
            response = error_page(request, refusal_message(error, status), status)
            if isinstance(error, RateLimited):
                response.headers["Retry-After"] = str(error.retry_after)
            return response

    return answer_page_errors


# --------------------------------------------------------------------------- audit context


@web.middleware
async def request_context_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Put the request's client address (after ``server.trusted_proxies``) and ``User-Agent``
    in ``application.events.audit.REQUEST_CONTEXT`` while the handler runs, so that the audit
    rows the request writes name them (docs/reference/operations.md)."""
    trusted = request.app[CONTAINER].config().server.trusted_proxies
    token = REQUEST_CONTEXT.set(
        RequestContext(client_address(request, trusted), user_agent(request))
    )
    try:
        return await handler(request)
    finally:
        REQUEST_CONTEXT.reset(token)
