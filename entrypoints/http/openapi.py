"""The OpenAPI 3.1 document, built from the same ``RouteSpec`` list that fills the router."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

from aiohttp import web

from domain.model import BCRYPT_MAX_PASSWORD_BYTES
from entrypoints.http.anonymous_writes import ANONYMOUS_WRITES
from entrypoints.http.keys import CONTAINER
from entrypoints.http.openapi_schemas import NO_NUL, SCHEMAS
from entrypoints.http.routing import PASSWORD_POLICY, RouteSpec

RATE_LIMITED_OAUTH = "Rate limited: {error: rate_limited, error_description}, with Retry-After"
"""The 429 of an OAuth endpoint (RFC 6749 §5.2-style JSON; ``anonymous_writes``)."""

ROUTE_SPECS: web.AppKey[list[RouteSpec]] = web.AppKey("route_specs")
"""Every route of the app, in registration order (the router and this document agree)."""

RESOURCE_PATHS = {"User": "/users/{id}", "Group": "/groups/{id}"}
"""Where a resource returned in a body lives: its ``id`` fills these paths (OpenAPI links)."""


def _links(description: str, specs: list[RouteSpec]) -> dict[str, Any]:
    """OpenAPI links from a response carrying a ``User``/``Group`` to every operation on it."""
    prefix = RESOURCE_PATHS.get(description)
    if prefix is None:
        return {}
    return {
        _operation_id(spec): {
            "operationId": _operation_id(spec),
            "parameters": {"id": "$response.body#/id"},
        }
        for spec in specs
        if spec.path == prefix or spec.path.startswith(prefix + "/")
    }


def _operation_id(spec: RouteSpec) -> str:
    return f"{spec.method.lower()}_{spec.path.strip('/').replace('/', '_')}"


def _response(description: str, specs: list[RouteSpec]) -> dict[str, Any]:
    if description in SCHEMAS:
        media = "application/problem+json" if description == "Problem" else "application/json"
        if description.startswith("Scim"):
            media = "application/scim+json"
        response: dict[str, Any] = {
            "description": description,
            "content": {media: {"schema": {"$ref": f"#/components/schemas/{description}"}}},
        }
        links = _links(description, specs)
        if links:
            response["links"] = links
        return response
    return {"description": description}


STORAGE_TAGS = ("auth", "admin", "sessions", "email", "mfa", "oauth", "oauth-protocol", "passkeys")
"""Tags of the operations that use the database: each may answer 503 ``storage_unavailable``."""


def _statuses(spec: RouteSpec) -> dict[int, str]:
    """The spec's responses, plus the faults every such route may meet
    (docs/reference/operations.md): 408 where a body is read, 503 where the database is used, 429 on
    the writes from anyone (``ANONYMOUS_WRITES``; on the OAuth endpoints an RFC 6749 error,
    elsewhere a problem)."""
    statuses = dict(spec.responses)
    if spec.request is not None:
        statuses.setdefault(408, "Problem")
    limited = ANONYMOUS_WRITES.get((spec.method, spec.path))
    if limited is not None:
        statuses.setdefault(429, RATE_LIMITED_OAUTH if limited.oauth else "Problem")
    if spec.tag in STORAGE_TAGS:
        statuses.setdefault(503, "Problem")
    return dict(sorted(statuses.items()))


def _strict(schema: dict[str, Any], password_min: int, *, form: bool = False) -> dict[str, Any]:
    """A copy of a request schema stating what the request parser enforces on every route
    (docs/reference/operations.md), so that the document predicts every refusal but semantic ones:
    a string without its own ``pattern``/``format``/``enum`` holds no U+0000 (``NO_NUL``); an
    object's unknown members are any JSON value whose numbers fit 64 bits (strings only in a
    form); ``PASSWORD_POLICY`` strings get the configured length bounds."""
    out = dict(schema)
    if out.pop(PASSWORD_POLICY, False):
        out["minLength"] = password_min
        out["maxLength"] = BCRYPT_MAX_PASSWORD_BYTES
    kind = out.get("type")
    if kind == "string" and not {"pattern", "format", "enum", "const"} & set(out):
        out["pattern"] = NO_NUL
    if kind == "object" or "properties" in out:
        out["properties"] = {
            k: _strict(v, password_min, form=form) for k, v in out.get("properties", {}).items()
        }
        if "additionalProperties" not in out:
            out["additionalProperties"] = (
                {"type": "string"} if form else {"$ref": "#/components/schemas/JsonValue"}
            )
    if isinstance(out.get("items"), dict):
        out["items"] = _strict(out["items"], password_min, form=form)
    for key in ("oneOf", "anyOf", "allOf"):
        if key in out:
            out[key] = [_strict(s, password_min, form=form) for s in out[key]]
    return out


def _parameter(param: dict[str, Any], password_min: int) -> dict[str, Any]:
    if param.get("in") == "path":  # ids are opaque: any segment (a bad one is an unknown id)
        return param
    return {**param, "schema": _strict(param["schema"], password_min)}


def _operation(spec: RouteSpec, specs: list[RouteSpec], password_min: int) -> dict[str, Any]:
    op: dict[str, Any] = {
        "summary": spec.summary,
        "operationId": _operation_id(spec),
        "tags": [spec.tag],
        "responses": {str(code): _response(desc, specs) for code, desc in _statuses(spec).items()},
    }
    if spec.bearer:
        op["security"] = [{"bearerAuth": []}]
    if spec.parameters:
        op["parameters"] = [_parameter(p, password_min) for p in spec.parameters]
    if spec.request is not None:
        form = not spec.media_type.endswith("json")
        op["requestBody"] = {
            "required": True,
            "content": {
                spec.media_type: {"schema": _strict(spec.request, password_min, form=form)}
            },
        }
    return op


def build_openapi(app: web.Application) -> dict[str, Any]:
    """OpenAPI 3.1 for every ``RouteSpec`` in ``app[ROUTE_SPECS]``: the API operations under
    ``paths``; the HTML pages for browsers (``RouteSpec.page``: the hosted pages,
    ``/oauth/authorize``, ``/oauth/logout``) listed by method, path and summary under
    ``x-authsvc-pages`` (no API client calls them, and their answers are pages and redirects
    driven by cookies, which the document cannot describe as operations)."""
    try:
        app_version = version("authsvc")
    except PackageNotFoundError:  # running from a checkout without install
        app_version = "0"
    paths: dict[str, dict[str, Any]] = {}
    specs = app[ROUTE_SPECS]
    password_min = app[CONTAINER].config().auth.password_min_length
    for spec in specs:
        if not spec.page:
            paths.setdefault(spec.path, {})[spec.method.lower()] = _operation(
                spec, specs, password_min
            )
    pages = [{"method": s.method, "path": s.path, "summary": s.summary} for s in specs if s.page]
    return {
        "openapi": "3.1.0",
        "info": {"title": "authsvc", "version": app_version},
        "paths": paths,
        "x-authsvc-pages": pages,
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {
                "bearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}
            },
        },
    }
