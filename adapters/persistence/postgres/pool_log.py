"""asyncpg's pool keeps ``min_size`` connections: when one is lost and a new one cannot be made
(the database restarting, its name not resolving while a pod stops), it logs a WARNING on
``asyncpg.pool`` with the whole traceback, every retry. This filter makes such a record one line
naming the error, any URL's password hidden: the database being away is an operational state
(readiness says so), not a bug, and an operator's log shows no traceback for it (docs/deploy.md)."""

from __future__ import annotations

import logging
import re

ASYNCPG_POOL_LOGGER = "asyncpg.pool"

__all__ = ["ASYNCPG_POOL_LOGGER", "PoolLogFilter", "install_pool_log_filter"]


_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s:/@]*:)[^\s@]*@", re.I)
"""The password of a URL with credentials (``scheme://user:password@``)."""


def _first_line(exc: BaseException) -> str:
    text = (str(exc).strip() or type(exc).__name__).splitlines()[0]
    return _PASSWORD.sub(r"\1***@", text)


class PoolLogFilter(logging.Filter):
    """Rewrites ``asyncpg.pool`` records that carry an exception into ``"<message>:
    <ExceptionClass>: <first line>"`` with no traceback and any URL's password replaced by
    ``***``. Records without an exception pass unchanged."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite ``record`` in place; always keep it."""
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None:
            record.msg = f"{record.getMessage()}: {type(exc).__name__}: %s"
            record.args = (_first_line(exc),)
            record.exc_info = None
            record.exc_text = None
        return True


def install_pool_log_filter() -> None:
    """Add a ``PoolLogFilter`` to asyncpg's pool logger (once per process)."""
    logger = logging.getLogger(ASYNCPG_POOL_LOGGER)
    if not any(isinstance(f, PoolLogFilter) for f in logger.filters):
        logger.addFilter(PoolLogFilter())
