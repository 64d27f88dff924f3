"""Slow and idle clients (docs/reference/operations.md, ADR 0014): the runner that serves the app
with ``server.header_timeout``, ``server.body_timeout`` and ``server.keepalive_timeout``.

- **Idle**: a connection with no request under way (none sent yet, or the last one answered)
  is closed after ``keepalive_timeout`` seconds — aiohttp's own keep-alive timer.
- **Headers**: once the first byte of a request has arrived, its whole header block must
  arrive within ``header_timeout`` seconds, else the connection is answered 408
  ``request_timeout`` (problem+json) and closed. aiohttp has no such limit, so
  ``HeaderTimeoutHandler`` adds one to its ``RequestHandler``.
- **Body**: ``entrypoints.http.requests.read_json`` reads the body within ``body_timeout``
  seconds (``BODY_TIMEOUT`` in the app), else 408 and the connection closes; aiohttp then
  drains what is still coming for at most ``LINGERING_TIME`` seconds before it closes.

``HeaderTimeoutHandler`` reads a few private attributes of aiohttp's ``RequestHandler``
(``_messages``, ``_request_in_progress``, ``_waiter``, ``_force_close``,
``_next_keepalive_close_time``); aiohttp is pinned by ``uv.lock`` and
``tests/e2e/processes/test_slow_clients.py`` fails if an upgrade changes them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from entrypoints.config.infrastructure import ServerSettings
from entrypoints.http.problems import PROBLEM_JSON, problem_body

LINGERING_TIME = 0.5
"""Seconds aiohttp keeps reading (and dropping) the unread rest of a body after answering,
before it closes (its default is 10): a client cut off by ``body_timeout`` is gone within
``body_timeout`` + this."""

MAX_LINE_SIZE = 16_384
"""The longest request line (and ``MAX_FIELD_SIZE`` the longest header line) taken, in bytes
(aiohttp's default is 8,190): an ``/oauth/authorize`` GET with an ML-DSA-87 ``id_token_hint``
(RFC 9964; about 6.7 kB), the login page's ``return_to`` carrying it, and its ``Referer``."""
MAX_FIELD_SIZE = 16_384

_HEADER_TIMEOUT_BODY = problem_body(
    408, "request_timeout", "the request headers did not arrive within server.header_timeout"
)
REQUEST_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\n"
    b"Content-Type: " + PROBLEM_JSON.encode() + b"\r\n"
    b"Content-Length: " + str(len(_HEADER_TIMEOUT_BODY)).encode() + b"\r\n"
    b"Connection: close\r\n\r\n" + _HEADER_TIMEOUT_BODY
)
"""The bytes sent to a client whose headers did not arrive in time (no route ran, so no
middleware makes them): a 408 problem+json, then the connection closes."""


class HeaderTimeoutHandler(web.RequestHandler):
    """aiohttp's ``RequestHandler`` with a deadline for request headers.

    The first byte of a request that arrives while the connection has no request under way
    arms a timer of ``header_timeout`` seconds; a complete header block disarms it. If it fires
    while the connection still waits for those headers, the client gets
    ``REQUEST_TIMEOUT_RESPONSE`` and the connection closes. If it fires while a request is
    being served (a pipelined request's headers arrive behind it) or aiohttp drains an unread
    body, it is armed again. aiohttp's keep-alive timer, which would close a connection waiting
    for headers silently, is pushed past the header deadline.
    """

    __slots__ = ("_header_deadline", "_header_timeout", "_stopping")

    def __init__(self, manager: web.Server, *, header_timeout: float, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._header_timeout = header_timeout
        self._header_deadline: asyncio.TimerHandle | None = None
        self._stopping = False

    def _busy(self) -> bool:
        return bool(self._messages) or self._request_in_progress

    def stop_accepting(self) -> None:
        """The server stops accepting (SIGTERM, after ``server.shutdown_delay``): a connection
        with no request under way closes at once — one whose next request has not arrived
        whole is refused, never held; one serving a request keeps receiving that request's
        body, ignores anything sent after it, and closes once it has answered."""
        self._stopping = True
        self._disarm()
        if self._busy():
            self.close()  # aiohttp: no further request on this connection
        else:
            self.force_close()

    def data_received(self, data: bytes) -> None:
        """Feed aiohttp's parser; arm or disarm the header deadline. Once the server has
        stopped accepting, only the body of the request being served is read (aiohttp itself
        would drop it, leaving that request to time out)."""
        if self._stopping:
            self._feed_body_only(data)
            return
        was_busy = self._busy()
        super().data_received(data)
        if self._busy():
            self._disarm()
        elif data and not was_busy and self._header_deadline is None and not self._force_close:
            self._arm()

    def _feed_body_only(self, data: bytes) -> None:
        if self.transport is None or self._parser is None or not self._busy():
            return
        try:
            self._parser.feed_data(data)  # requests parsed behind the current one are dropped
        except Exception:
            self.force_close()

    def _arm(self) -> None:
        deadline = self._loop.time() + self._header_timeout
        self._header_deadline = self._loop.call_at(deadline, self._headers_late)
        # aiohttp's keep-alive check would close this connection silently before our 408.
        self._next_keepalive_close_time = max(self._next_keepalive_close_time, deadline + 1)

    def _disarm(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_late(self) -> None:
        self._header_deadline = None
        if self.transport is None or self._force_close:
            return
        waiting_for_headers = self._waiter is not None and not self._waiter.done()
        if self._busy() or not waiting_for_headers:
            self._arm()
            return
        self.transport.write(REQUEST_TIMEOUT_RESPONSE)
        self.force_close()  # the transport sends what it holds, then closes

    def connection_lost(self, exc: BaseException | None) -> None:
        """Disarm the deadline; then aiohttp's own cleanup."""
        self._disarm()
        super().connection_lost(exc)


class _Server(web.Server):
    """aiohttp's low-level ``Server`` making ``HeaderTimeoutHandler`` protocols."""

    def __init__(self, *args: Any, header_timeout: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timeout = header_timeout

    def pre_shutdown(self) -> None:
        """Stop accepting on every connection (``HeaderTimeoutHandler.stop_accepting``)."""
        for connection in self.connections:
            if isinstance(connection, HeaderTimeoutHandler):
                connection.stop_accepting()
            else:  # pragma: no cover - every connection of this server is one
                connection.close()

    def __call__(self) -> web.RequestHandler:
        return HeaderTimeoutHandler(
            self, loop=self._loop, header_timeout=self._header_timeout, **self._kwargs
        )


class ServingRunner(web.AppRunner):
    """The ``AppRunner`` of ``authsvc serve``: no access log, no signal handling of its own
    (``entrypoints.serve`` handles SIGTERM), requests in flight get ``server.shutdown_timeout``
    seconds at cleanup, and the slow/idle client limits of this module from ``server``."""

    __slots__ = ("_header_timeout",)

    def __init__(self, app: web.Application, server: ServerSettings) -> None:
        super().__init__(
            app,
            handle_signals=False,
            access_log=None,
            shutdown_timeout=server.shutdown_timeout,
            keepalive_timeout=server.keepalive_timeout,
            lingering_time=LINGERING_TIME,
            max_line_size=MAX_LINE_SIZE,
            max_field_size=MAX_FIELD_SIZE,
        )
        self._header_timeout = server.header_timeout

    async def _make_server(self) -> web.Server:
        made = await super()._make_server()  # the app's startup runs here
        return _Server(
            made.request_handler,
            request_factory=made.request_factory,
            handler_cancellation=made.handler_cancellation,
            header_timeout=self._header_timeout,
            **made._kwargs,
        )
