"""Requests that are not HTTP at all (a NUL in a header, a broken request line) never reach a
route: aiohttp's parser answers them 400 and logs the error with a traceback and the offending
bytes — which may be an ``Authorization`` header. This filter turns such a record into one line
without the bytes: a client's malformed request is not our error, and no secret goes to the log."""

from __future__ import annotations

import logging

from aiohttp.http_exceptions import HttpProcessingError

AIOHTTP_SERVER_LOGGER = "aiohttp.server"


class ProtocolErrorFilter(logging.Filter):
    """Rewrites ``aiohttp.server`` records caused by ``HttpProcessingError`` (the HTTP parser's
    400/413/431 ...) into ``INFO "malformed HTTP request from <addr> refused: <class>"``, with no
    exception text or traceback. Every other record passes unchanged."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, HttpProcessingError):
            peer = record.args[0] if isinstance(record.args, tuple) and record.args else "?"
            record.msg = "malformed HTTP request from %s refused: %s (status %s)"
            record.args = (peer, type(exc).__name__, exc.code)
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


def install_protocol_error_filter() -> None:
    """Add ``ProtocolErrorFilter`` to aiohttp's server logger (once)."""
    logger = logging.getLogger(AIOHTTP_SERVER_LOGGER)
    if not any(isinstance(f, ProtocolErrorFilter) for f in logger.filters):
        logger.addFilter(ProtocolErrorFilter())
