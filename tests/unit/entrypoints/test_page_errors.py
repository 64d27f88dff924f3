"""Errors on the hosted pages (``entrypoints.http.middlewares.page_errors``) and the one mapping of
a domain error to its status (``entrypoints.http.problems.status_of``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient
from dependency_injector import providers

from domain.errors import (
    DomainError,
    Forbidden,
    NotFound,
    RateLimited,
    StorageFault,
    ValidationFailed,
)
from entrypoints.config import Config
from entrypoints.container import Container
from entrypoints.http.assets import asset
from entrypoints.http.console.web import TEMPLATES as CONSOLE_TEMPLATES
from entrypoints.http.keys import CONTAINER
from entrypoints.http.middlewares import page_errors, problem_middleware
from entrypoints.http.pages.web import TEMPLATES as PAGE_TEMPLATES
from entrypoints.http.pages.web import setup_templates
from entrypoints.http.problems import status_of
from entrypoints.http.routing import RouteSpec, add_routes

Client = TestClient[web.Request, web.Application]


class _Gone(NotFound):
    """A subclass the table does not list: it answers as its parent."""


def test_status_of_walks_the_mro() -> None:
    assert status_of(NotFound("x")) == 404
    assert status_of(_Gone("x")) == 404
    assert status_of(Forbidden("x")) == 403
    assert status_of(ValidationFailed([])) == 422
    assert status_of(StorageFault()) == 503
    assert status_of(DomainError("x")) == 400


def _raising(error: Exception) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def handler(request: web.Request) -> web.StreamResponse:
        raise error

    return handler


async def _client(aiohttp_client: Any, specs: list[RouteSpec]) -> Client:
    app = web.Application(middlewares=[problem_middleware])
    app[CONTAINER] = Container(config=providers.Object(Config()))
    setup_templates(app, lambda: "", (PAGE_TEMPLATES, CONSOLE_TEMPLATES), {"asset": asset})
    add_routes(app, page_errors(specs))
    client: Client = await aiohttp_client(app)
    return client


async def test_a_storage_fault_on_a_page_goes_on_to_the_problem_middleware(
    aiohttp_client: Any,
) -> None:
    """By type, not by code: the page answers 503 problem+json with ``Retry-After``."""
    spec = RouteSpec("GET", "/ui/x", _raising(StorageFault()), "x", {}, page=True)
    client = await _client(aiohttp_client, [spec])
    resp = await client.get("/ui/x")
    assert resp.status == 503
    assert resp.content_type == "application/problem+json"
    assert "Retry-After" in resp.headers


async def test_json_routes_under_ui_keep_problem_json(aiohttp_client: Any) -> None:
    """A route under /ui/ that is no page (the passkey pages' JSON calls) is left alone, and so
    is a page outside /ui/."""
    specs = [
        RouteSpec("POST", "/ui/json", _raising(Forbidden("no")), "x", {}),
        RouteSpec("GET", "/authorize", _raising(Forbidden("no")), "x", {}, page=True),
    ]
    client = await _client(aiohttp_client, specs)
    for resp in (await client.post("/ui/json"), await client.get("/authorize")):
        assert resp.status == 403
        assert resp.content_type == "application/problem+json"


async def test_another_domain_error_on_a_page_is_the_error_page_of_its_status(
    aiohttp_client: Any,
) -> None:
    """A refusal a page handler let through: ``error.html`` with its status, a plain message,
    and ``Retry-After`` on a 429."""
    specs = [
        RouteSpec("GET", "/ui/forbidden", _raising(Forbidden("internal detail")), "x", {},
                  page=True),
        RouteSpec("GET", "/ui/gone", _raising(_Gone("x")), "x", {}, page=True),
        RouteSpec("GET", "/ui/slow", _raising(RateLimited(7)), "x", {}, page=True),
    ]  # fmt: skip
    client = await _client(aiohttp_client, specs)
    forbidden = await client.get("/ui/forbidden")
    assert forbidden.status == 403 and forbidden.content_type == "text/html"
    text = await forbidden.text()
    assert "You may not do this." in text and "internal detail" not in text
    assert forbidden.headers["X-Frame-Options"] == "DENY"
    assert (await client.get("/ui/gone")).status == 404
    slow = await client.get("/ui/slow")
    assert slow.status == 429 and slow.headers["Retry-After"] == "7"
