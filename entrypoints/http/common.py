"""Request helpers shared by the route modules: JSON bodies, bearer tokens, client address,
JSON views of domain objects, and ``RouteSpec`` (one description feeds router and OpenAPI)."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, TypeVar

import attrs
import cattrs
from aiohttp import web

from domain.errors import InvalidToken
from domain.model import GroupSummary, User
from entrypoints.http.problems import HttpProblem
from entrypoints.structuring import make_converter, structure

T = TypeVar("T")

request_converter: cattrs.Converter = make_converter(forbid_extra_keys=False)
"""Structures request bodies; unknown members are ignored, wrong types are 422."""


async def read_json(request: web.Request, cls: type[T]) -> T:
    """The request body structured into ``cls``.

    Raises ``HttpProblem`` 400 ``malformed_body`` when the Content-Type is not JSON or the body
    is not a JSON object, aiohttp's 413 when it exceeds ``server.max_body_bytes`` (the app's
    ``client_max_size``), and ``ValidationFailed`` (422) naming each bad field.
    """
    ctype = request.content_type
    if not (
        ctype == "application/json"
        or (ctype.startswith("application/") and ctype.endswith("+json"))
    ):
        raise HttpProblem(400, "malformed_body", "Content-Type must be application/json")
    raw = await request.read()
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise HttpProblem(400, "malformed_body", "body is not valid JSON") from None
    if not isinstance(data, dict):
        raise HttpProblem(400, "malformed_body", "body must be a JSON object")
    return structure(request_converter, data, cls)


def bearer_token(request: web.Request) -> str:
    """The token of an ``Authorization: Bearer <token>`` header (RFC 6750 section 2.1).

    Raises ``InvalidToken`` when the header is missing or uses another scheme.
    """
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise InvalidToken("a Bearer access token is required")
    return token.strip()


def client_address(request: web.Request, trusted_proxies: tuple[str, ...]) -> str:
    """The client's address: the peer, or — when the peer is a trusted proxy (address or CIDR in
    ``server.trusted_proxies``) — the right-most ``X-Forwarded-For`` entry not itself trusted."""
    peer = request.remote or "unknown"
    if not trusted_proxies:
        return peer
    nets = [ipaddress.ip_network(p, strict=False) for p in trusted_proxies]

    def trusted(addr: str) -> bool:
        try:
            ip = ipaddress.ip_address(addr)
        except ValueError:
            return False
        return any(ip in net for net in nets)

    if not trusted(peer):
        return peer
    hops = [h.strip() for h in request.headers.get("X-Forwarded-For", "").split(",") if h.strip()]
    for hop in reversed(hops):
        if not trusted(hop):
            return hop
    return peer


def iso(ts: datetime) -> str:
    """RFC 3339 UTC timestamp, e.g. ``2026-01-01T00:00:00Z``."""
    return ts.isoformat().replace("+00:00", "Z")


def user_json(user: User, groups: list[str] | None = None) -> dict[str, Any]:
    """Contract ``User``: id, email, role, org_id, created_at (+ groups). Never a password hash."""
    body: dict[str, Any] = {
        "id": user.id,
        "email": user.email,
        "role": user.role.value,
        "org_id": user.org_id,
        "created_at": iso(user.created_at),
    }
    if groups is not None:
        body["groups"] = groups
    return body


def group_json(summary: GroupSummary) -> dict[str, Any]:
    """Contract ``Group``: id, name, org_id, member_count, created_at."""
    g = summary.group
    return {
        "id": g.id,
        "name": g.name,
        "org_id": g.org_id,
        "member_count": summary.member_count,
        "created_at": iso(g.created_at),
    }


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@attrs.frozen
class RouteSpec:
    """One route: registered on the router and described in /openapi.json from the same data.

    ``request`` is the JSON Schema of the body (or None); ``responses`` maps status → description;
    ``bearer`` marks routes that need an access token; ``parameters`` are OpenAPI parameter objects.
    """

    method: str
    path: str
    handler: Handler
    summary: str
    responses: dict[int, str]
    request: dict[str, Any] | None = None
    bearer: bool = False
    parameters: tuple[dict[str, Any], ...] = ()
    tag: str = "auth"


def add_routes(app: web.Application, specs: list[RouteSpec]) -> None:
    """Register every spec on ``app``'s router."""
    for spec in specs:
        app.router.add_route(spec.method, spec.path, spec.handler)
