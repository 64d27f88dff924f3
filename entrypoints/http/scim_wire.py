"""The SCIM 2.0 wire format of ``/scim/v2`` (RFC 7643, RFC 7644; docs/reference/scim.md), with
``scim2-models``: the request bodies and query parameters read into its models (filters,
sorting, PATCH paths evaluated by the library), lists, the errors as SCIM ``Error`` messages.
Our users and groups as SCIM resources, and the discovery documents:
``entrypoints.http.scim_resources``.

Nothing here decides access or changes anything: ``entrypoints.http.scim_routes`` hands what is
read here to the use cases of ``application.scim``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import orjson
from aiohttp import web
from pydantic import ValidationError
from scim2_models import (
    Context,
    InvalidSyntaxException,
    InvalidValueException,
    ListResponse,
    NotFoundException,
    PatchOp,
    Resource,
    ResponseParameters,
    SCIMException,
    SearchRequest,
    UniquenessException,
)

from domain import errors
from entrypoints.http.problems import HttpProblem, status_of
from entrypoints.http.requests import parse_json_object, read_body
from entrypoints.http.scim_routes import SCIM_MEDIA_TYPE

__all__ = [
    "MAX_COUNT",
    "list_response",
    "read_patch",
    "read_resource",
    "read_search",
    "response_parameters",
    "scim_errors",
    "scim_response",
    "search_request",
]


MAX_COUNT = 200
"""The most resources one list answers (``filter.maxResults``); a larger ``count`` is cut to it."""

_DEFAULT_COUNT = 100


R = TypeVar("R", bound=Resource[Any])
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def scim_response(
    data: dict[str, Any], status: int = 200, location: str | None = None
) -> web.Response:
    """A SCIM response: ``data`` as JSON, ``Content-Type: application/scim+json``,
    ``Cache-Control: no-store`` and ``Location`` when given (RFC 7644 §3.1)."""
    headers = {"Cache-Control": "no-store"}
    if location is not None:
        headers["Location"] = location
    return web.Response(
        body=orjson.dumps(data), status=status, headers=headers, content_type=SCIM_MEDIA_TYPE
    )


def _error_response(error: SCIMException, headers: dict[str, str] | None = None) -> web.Response:
    body = error.to_error().model_dump(scim_ctx=Context.DEFAULT)
    body["status"] = str(error.status)
    response = scim_response(body, error.status)
    response.headers.update(headers or {})
    return response


def _status_error(status: int, detail: str, scim_type: str | None = None) -> SCIMException:
    error = SCIMException(detail=detail)
    error.status = status
    error.scim_type = scim_type or ""
    return error


def _domain_error(exc: errors.DomainError) -> tuple[SCIMException, dict[str, str]]:
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, errors.InvalidToken):
        header = f'Bearer error="invalid_token", error_description="{detail}"'
        return _status_error(401, detail), {"WWW-Authenticate": header}
    if isinstance(exc, errors.Forbidden):
        return _status_error(403, detail), {}
    if isinstance(exc, errors.NotFound):
        return NotFoundException(detail=detail), {}
    if isinstance(exc, errors.EmailTaken):
        return UniquenessException(detail=detail), {}
    if isinstance(exc, errors.ValidationFailed):
        text = "; ".join(f"{e.field} {e.message}" for e in exc.errors) or detail
        return InvalidValueException(detail=text), {}
    if isinstance(exc, errors.StorageFault):
        return _status_error(503, "storage is unavailable"), {"Retry-After": str(exc.retry_after)}
    if isinstance(exc, errors.Conflict):
        return UniquenessException(detail=detail), {}
    return _status_error(status_of(exc), detail), {}


def _validation_error(exc: ValidationError) -> SCIMException:
    found = exc.errors()
    if not found:
        return _status_error(400, "the body is not valid", "invalidValue")
    first = found[0]
    kind = str(first["type"])
    where = ".".join(str(p) for p in first["loc"])
    detail = f"{where}: {first['msg']}" if where else str(first["msg"])
    scim_type = kind.removeprefix("scim_") if kind.startswith("scim_") else "invalidValue"
    return _status_error(400, detail[:500], scim_type)


def scim_errors(handler: Handler) -> Handler:
    """Wrap a ``/scim/v2`` handler so that every refusal is a SCIM ``Error`` message
    (``urn:ietf:params:scim:api:messages:2.0:Error``, RFC 7644 §3.12) rather than
    problem+json: domain errors by kind (401 with ``WWW-Authenticate: Bearer``, 403, 404, 409
    ``uniqueness``, 400 ``invalidValue``/``mutability``, 503 with ``Retry-After``), the
    library's errors as they are, a bad body 400 ``invalidSyntax``."""

    async def answer_scim_errors(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except SCIMException as exc:
            return _error_response(exc)
        except ValidationError as exc:
            return _error_response(_validation_error(exc))
        except errors.DomainError as exc:
            error, headers = _domain_error(exc)
            return _error_response(error, headers)
        except HttpProblem as exc:
            scim_type = "invalidSyntax" if exc.status == 400 else None
            return _error_response(_status_error(exc.status, exc.detail, scim_type))
        except web.HTTPRequestEntityTooLarge:
            return _error_response(_status_error(413, "the request body is too large"))

    answer_scim_errors.__doc__ = handler.__doc__
    return answer_scim_errors


async def _read_object(request: web.Request) -> dict[str, Any]:
    ctype = request.content_type
    if ctype not in ("application/json", SCIM_MEDIA_TYPE):
        raise InvalidSyntaxException(detail=f"Content-Type must be {SCIM_MEDIA_TYPE}")
    return parse_json_object(await read_body(request))


async def read_resource(request: web.Request, model: type[R], context: Context) -> R:
    """The request body read as ``model`` (``User`` or ``Group``) in the SCIM ``context`` (a
    creation or a replacement: read-only attributes are dropped). Raises ``SCIMException`` /
    pydantic's ``ValidationError`` (400) and ``HttpProblem`` (a body that is not JSON)."""
    return model.model_validate(await _read_object(request), scim_ctx=context)


def _members_removal(operation: dict[str, Any]) -> list[dict[str, Any]]:
    """Entra ID removes members as ``{"op": "Remove", "path": "members", "value": [{"value":
    id}]}``, a form RFC 7644 §3.5.2.2 leaves to a filter in the path: it is rewritten to one
    ``members[value eq "id"]`` removal per member before the library reads it."""
    value = operation.get("value")
    if (
        str(operation.get("op", "")).lower() != "remove"
        or str(operation.get("path", "")).lower() != "members"
        or not isinstance(value, list)
        or not value
        or not all(isinstance(v, dict) and isinstance(v.get("value"), str) for v in value)
    ):
        return [operation]
    quote = orjson.dumps
    return [
        {"op": "remove", "path": f"members[value eq {quote(v['value']).decode()}]"} for v in value
    ]


async def read_patch(request: web.Request, model: type[R]) -> PatchOp[R]:
    """The body of a PATCH (RFC 7644 §3.5.2) as the library's ``PatchOp[model]``, the forms
    Entra ID and Okta send included (``op`` in any case, ``replace`` with or without
    ``path``, booleans as the strings ``"True"``/``"False"``, members removed by value)."""
    body = await _read_object(request)
    operations = body.get("Operations")
    if isinstance(operations, list):
        body["Operations"] = [
            rewritten
            for op in operations
            for rewritten in (_members_removal(op) if isinstance(op, dict) else [op])
        ]
    patch: PatchOp[R] = PatchOp[model].model_validate(  # type: ignore[valid-type]
        body, scim_ctx=Context.RESOURCE_PATCH_REQUEST
    )
    return patch


def search_request(request: web.Request, model: type[R]) -> SearchRequest[R]:
    """The query of a list (RFC 7644 §3.4.2): ``filter``, ``sortBy``, ``sortOrder``,
    ``startIndex`` (default 1), ``count`` (default 100, at most ``MAX_COUNT``),
    ``attributes``, ``excludedAttributes``. A bad filter is 400 ``invalidFilter``."""
    names = ("filter", "sortBy", "sortOrder", "startIndex", "count", "attributes",
             "excludedAttributes")  # fmt: skip
    query = {n: request.query[n] for n in names if n in request.query}
    search: SearchRequest[R] = SearchRequest[model].model_validate(  # type: ignore[valid-type]
        query, scim_ctx=Context.RESOURCE_QUERY_REQUEST
    )
    return search


def response_parameters(request: web.Request, model: type[R]) -> ResponseParameters[R]:
    """The ``attributes`` and ``excludedAttributes`` of the query (RFC 7644 §3.9)."""
    names = ("attributes", "excludedAttributes")
    query = {n: request.query[n] for n in names if n in request.query}
    params: ResponseParameters[R] = ResponseParameters[model].model_validate(  # type: ignore[valid-type]
        query
    )
    return params


async def read_search(request: web.Request, model: type[R]) -> SearchRequest[R]:
    """The body of a POST ``.search`` (RFC 7644 §3.4.3) as ``SearchRequest[model]``."""
    search: SearchRequest[R] = SearchRequest[model].model_validate(  # type: ignore[valid-type]
        await _read_object(request), scim_ctx=Context.SEARCH_REQUEST
    )
    return search


def list_response(search: SearchRequest[R], model: type[R], every: list[R]) -> dict[str, Any]:
    """The ``ListResponse`` of the resources of ``every`` (all of ``model`` the caller may see)
    that match ``search``'s filter (evaluated by the library), sorted and paged as it asks
    (RFC 7644 §3.4.2; ``startIndex`` is 1-based)."""
    found = every if search.filter is None else [r for r in every if search.filter.match(r)]
    ordered = search.sort(found) if search.sort_by is not None else found
    start = max(search.start_index or 1, 1)
    count = min(_DEFAULT_COUNT if search.count is None else max(search.count, 0), MAX_COUNT)
    page = ordered[start - 1 : start - 1 + count]
    response = ListResponse[model](  # type: ignore[valid-type]
        total_results=len(found), start_index=start, items_per_page=len(page), resources=page
    )
    data: dict[str, Any] = response.model_dump(
        scim_ctx=Context.RESOURCE_QUERY_RESPONSE, response_parameters=search
    )
    return data
