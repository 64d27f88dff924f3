"""The pooled connections of a ``PostgresStorage``, as its sessions see them: acquire, release,
discard all after a lost connection, and the ``StorageFault`` for a driver error."""

from __future__ import annotations

from contextlib import suppress
from typing import Any

import asyncpg

from adapters.persistence.errors import safe_reason
from adapters.persistence.postgres.faults import (
    CONNECTION_RETRY_AFTER,
    WRITE_FAULTS,
    WRITE_RETRY_AFTER,
    is_fault,
    log,
)
from domain.errors import StorageFault


class ConnectionSource:
    """The storage's asyncpg pool (``attach``-ed by ``open()``, ``detach``-ed by ``close()``),
    handed to each session; ``dsn`` is only used to hide its password in logs."""

    def __init__(self, dsn: str) -> None:
        self._dsn = dsn
        self._pool: asyncpg.Pool | None = None

    def attach(self, pool: asyncpg.Pool) -> None:
        """Serve connections from ``pool``."""
        self._pool = pool

    def detach(self) -> asyncpg.Pool | None:
        """Stop serving; the pool (None if none was attached), for the caller to close."""
        pool, self._pool = self._pool, None
        return pool

    def require_pool(self) -> asyncpg.Pool:
        """The pool; ``RuntimeError`` when the storage is not open."""
        if self._pool is None:
            raise RuntimeError("PostgresStorage is not open; call open() first")
        return self._pool

    def fault(self, exc: BaseException, *, commit: bool = False) -> StorageFault:
        """The ``StorageFault`` for a driver error (logged as a warning, password hidden).
        ``commit``: the connection was lost during a commit that had written (outcome
        unknown)."""
        log.warning("storage fault: %s: %s", type(exc).__name__, safe_reason(exc, self._dsn))
        if isinstance(exc, WRITE_FAULTS):
            return StorageFault("the database cannot write now", WRITE_RETRY_AFTER)
        if commit:
            return StorageFault(
                "the database connection was lost during the commit: the change may or may"
                " not have been made",
                CONNECTION_RETRY_AFTER,
            )
        return StorageFault(
            "the database cannot be reached; nothing was changed", CONNECTION_RETRY_AFTER
        )

    async def acquire(self) -> Any:
        """A pooled connection (waits for a free one). Raises ``StorageFault`` when none can
        be made (server down, refusing, too many connections); ``RuntimeError`` when not
        open."""
        pool = self.require_pool()
        try:
            return await pool.acquire()
        except Exception as exc:
            if not is_fault(exc):
                raise
            raise self.fault(exc) from None

    async def release(self, conn: Any) -> None:
        """Give ``conn`` back to the pool; one that cannot be reset is terminated. Never
        raises."""
        pool = self._pool
        if pool is None:
            with suppress(Exception):
                conn.terminate()
            return
        try:
            await pool.release(conn)
        except Exception as exc:  # the reset failed: asyncpg has terminated it
            log.info("discarded a connection on release: %s", type(exc).__name__)

    async def expire_all(self) -> None:
        """Replace every pooled connection by a new one at its next use (after a lost
        connection: the server may have restarted)."""
        if self._pool is not None:
            await self._pool.expire_connections()
