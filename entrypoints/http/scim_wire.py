"""The SCIM 2.0 wire format of ``/scim/v2`` (RFC 7643, RFC 7644; docs/reference/scim.md), with
``scim2-models``: our users and groups as SCIM resources, the request bodies and query
parameters read into its models (filters, sorting, PATCH paths evaluated by the library), the
errors as SCIM ``Error`` messages, the discovery documents.

Nothing here decides access or changes anything: ``entrypoints.http.scim_routes`` hands what is
read here to the use cases of ``application.scim``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

import orjson
from aiohttp import web
from pydantic import ValidationError
from scim2_models import (
    URN,
    AuthenticationScheme,
    Bulk,
    ChangePassword,
    Context,
    Email,
    ETag,
    Filter,
    Group,
    GroupMember,
    InvalidSyntaxException,
    InvalidValueException,
    ListResponse,
    Meta,
    MutabilityException,
    NotFoundException,
    Patch,
    PatchOp,
    Reference,
    Required,
    Resource,
    ResourceType,
    ResponseParameters,
    Schema,
    SCIMException,
    SearchRequest,
    ServiceProviderConfig,
    Sort,
    Uniqueness,
    UniquenessException,
    User,
)

from application.accounts.groups import GroupDetail
from application.scim.users import USER_NAME_IMMUTABLE
from domain import errors
from domain.model import User as StoredUser
from entrypoints.http.problems import HttpProblem, status_of
from entrypoints.http.requests import parse_json_object, read_body

__all__ = [
    "MAX_COUNT",
    "SCIM_MEDIA_TYPE",
    "ProvisionedUser",
    "group_resource",
    "list_response",
    "read_patch",
    "read_resource",
    "read_search",
    "resource_types",
    "response_parameters",
    "schemas",
    "scim_errors",
    "scim_response",
    "search_request",
    "service_provider_config",
    "user_resource",
]

SCIM_MEDIA_TYPE = "application/scim+json"
"""The media type of every SCIM body (RFC 7644 §3.1)."""

MAX_COUNT = 200
"""The most resources one list answers (``filter.maxResults``); a larger ``count`` is cut to it."""

_DEFAULT_COUNT = 100
_MemberRef = Reference[User[Any] | Group]


class ProvisionedUser(Resource[Any]):
    """The ``User`` schema (RFC 7643 §4.1) as this service keeps it, published at
    ``/scim/v2/Schemas``: ``userName`` (the email), ``active`` and ``emails`` (that one
    email). The other attributes of a ``User`` sent to it are read and ignored."""

    __schema__ = URN(User.__schema__ or "")

    user_name: Annotated[str | None, Uniqueness.server, Required.true] = None
    """The user's email (docs/reference/scim.md): unique across the service."""

    active: bool | None = None
    """False for a disabled user."""

    emails: list[Email] | None = None
    """The user's email, once, ``primary``."""


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
        if any(e.message == USER_NAME_IMMUTABLE for e in exc.errors):
            return MutabilityException(detail=text), {}
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


def list_response(search: SearchRequest[R], model: type[R], found: list[R]) -> dict[str, Any]:
    """The ``ListResponse`` of ``found`` (resources of ``model``, filtered already) sorted and
    paged as ``search`` asks (RFC 7644 §3.4.2.4: ``startIndex`` is 1-based)."""
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


def user_resource(user: StoredUser, base: str) -> User[Any]:
    """``user`` as a SCIM ``User`` (RFC 7643 §4.1): ``userName`` and the one ``emails`` entry
    are its email, ``active`` is not ``disabled``; ``meta.location`` under ``base`` (the
    ``/scim/v2`` URL under ``auth.issuer``)."""
    return User[Any](
        id=user.id,
        user_name=user.email,
        active=not user.disabled,
        emails=[Email(value=user.email, primary=True, type=Email.Type.work)],
        meta=Meta(
            resource_type="User", created=user.created_at, last_modified=user.created_at,
            location=f"{base}/Users/{user.id}",
        ),
    )  # fmt: skip


def group_resource(detail: GroupDetail, base: str) -> Group:
    """``detail`` as a SCIM ``Group`` (RFC 7643 §4.2): ``displayName`` is its name, ``members``
    its users (``value`` the id, ``display`` the email, ``$ref`` their location)."""
    group = detail.group
    members = [
        GroupMember(
            value=m.id,
            display=m.email,
            type="User",
            ref=_MemberRef(f"{base}/Users/{m.id}"),
        )
        for m in detail.members
    ]
    return Group(
        id=group.id,
        display_name=group.name,
        members=members or None,
        meta=Meta(
            resource_type="Group", created=group.created_at, last_modified=group.created_at,
            location=f"{base}/Groups/{group.id}",
        ),
    )  # fmt: skip


def service_provider_config(base: str) -> dict[str, Any]:
    """The ``ServiceProviderConfig`` (RFC 7643 §5): PATCH, filter (``MAX_COUNT`` results) and
    sort supported; bulk, password change and ETags not; OAuth 2.0 bearer tokens."""
    config = ServiceProviderConfig(
        documentation_uri=None,
        patch=Patch(supported=True),
        bulk=Bulk(supported=False, max_operations=0, max_payload_size=0),
        filter=Filter(supported=True, max_results=MAX_COUNT),
        change_password=ChangePassword(supported=False),
        sort=Sort(supported=True),
        etag=ETag(supported=False),
        authentication_schemes=[
            AuthenticationScheme(
                type=AuthenticationScheme.Type.oauthbearertoken, name="OAuth Bearer Token",
                primary=True,
                description="A client credentials access token (RFC 6749 §4.4) with the scim "
                            "scope, from the token endpoint of this service",
            )
        ],
        meta=Meta(resource_type="ServiceProviderConfig",
                  location=f"{base}/ServiceProviderConfig"),
    )  # fmt: skip
    data: dict[str, Any] = config.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE)
    return data


def _resource_types(base: str) -> list[ResourceType]:
    found = []
    for model in (ProvisionedUser, Group):
        item = ResourceType.from_resource(model)
        item.description = f"{item.name}s of the organization"
        item.meta = Meta(resource_type="ResourceType", location=f"{base}/ResourceTypes/{item.id}")
        found.append(item)
    return found


def resource_types(base: str, name: str | None = None) -> dict[str, Any]:
    """The ``ResourceTypes`` (RFC 7644 §4): ``User`` and ``Group``, as a ``ListResponse``, or
    the one ``name``. Raises ``NotFoundException`` for another name."""
    types = _resource_types(base)
    if name is None:
        listed = ListResponse[ResourceType](
            total_results=len(types), start_index=1, items_per_page=len(types), resources=types
        )
        data: dict[str, Any] = listed.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE)
        return data
    for item in types:
        if item.id == name:
            one: dict[str, Any] = item.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE)
            return one
    raise NotFoundException(detail=f"no resource type {name}")


def schemas(base: str, schema_id: str | None = None) -> dict[str, Any]:
    """The ``Schemas`` (RFC 7643 §7) of ``User`` and ``Group`` as a ``ListResponse``, or the
    one ``schema_id``. Raises ``NotFoundException`` for another id."""
    found = []
    for model, name in ((ProvisionedUser, "User"), (Group, "Group")):
        schema = model.to_schema()
        schema.name, schema.description = name, f"{name}s of the organization"
        schema.meta = Meta(resource_type="Schema", location=f"{base}/Schemas/{schema.id}")
        found.append(schema)
    if schema_id is None:
        listed = ListResponse[Schema](
            total_results=len(found), start_index=1, items_per_page=len(found), resources=found
        )
        data: dict[str, Any] = listed.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE)
        return data
    for schema in found:
        if schema.id == schema_id:
            one: dict[str, Any] = schema.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE)
            return one
    raise NotFoundException(detail=f"no schema {schema_id}")
