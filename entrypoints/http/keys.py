"""Typed application state (``web.AppKey``) shared by the route modules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

if TYPE_CHECKING:
    from entrypoints.container import Container

CONTAINER: web.AppKey[Container] = web.AppKey("container")
"""The dependency-injector container that built this app."""

BODY_TIMEOUT: web.AppKey[float] = web.AppKey("body_timeout", float)
"""``server.body_timeout``: seconds a request body may take to arrive
(docs/reference/operations.md)."""
