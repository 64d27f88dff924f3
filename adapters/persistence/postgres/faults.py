"""PostgreSQL storage faults (docs/reference/operations.md, ADR 0014): which driver errors mean the
connection is lost or the server cannot write now, and their ``Retry-After``."""

from __future__ import annotations

import logging
from typing import Any

import asyncpg

DSN_KEY = "storage.postgres_dsn"
"""The setting a ``StorageUnavailable`` names."""

log = logging.getLogger("authsvc.storage")

CONNECTION_FAULTS: tuple[type[BaseException], ...] = (
    OSError,  # refused, reset, unreachable (ConnectionError and socket errors)
    TimeoutError,  # connecting took longer than the pool's timeout
    asyncpg.PostgresConnectionError,  # class 08: ConnectionDoesNotExistError ("closed in the
    # middle of operation"), connection failure, rejection, protocol violation
    asyncpg.AdminShutdownError,  # 57P01: pg_terminate_backend, fast or smart shutdown
    asyncpg.CrashShutdownError,  # 57P02
    asyncpg.CannotConnectNowError,  # 57P03: starting up, shutting down, in recovery
    asyncpg.IdleSessionTimeoutError,
    asyncpg.IdleInTransactionSessionTimeoutError,
    asyncpg.TooManyConnectionsError,  # 53300
    asyncpg.InternalClientError,  # the protocol's state broken by a connection lost mid-call
)
"""asyncpg and socket errors after which a connection is unusable (or none could be made): the
connection is discarded; a read is retried once on a fresh one."""

WRITE_FAULTS: tuple[type[BaseException], ...] = (
    asyncpg.DiskFullError,  # 53100
    asyncpg.OutOfMemoryError,  # 53200
    asyncpg.ReadOnlySQLTransactionError,  # 25006: a standby, or default_transaction_read_only
)
"""Errors of a reachable server that cannot write now; never retried."""

CONNECTION_RETRY_AFTER = 1
"""``Retry-After`` (s) for a lost or refused connection: a restart takes about that long."""
WRITE_RETRY_AFTER = 5
"""``Retry-After`` (s) when the server cannot write (disk full, read-only): an operator acts."""


def _closed(conn: Any) -> bool:
    """Whether a (pooled) connection is closed; one already handed back to the pool by its own
    closing counts as closed."""
    try:
        return bool(conn.is_closed())
    except asyncpg.InterfaceError:  # "released back to the pool": it closed meanwhile
        return True


def is_connection_fault(exc: BaseException, conn: Any = None) -> bool:
    """Whether ``exc`` means the connection ``conn`` (if any) is lost or none could be made:
    one of ``CONNECTION_FAULTS``, or an ``InterfaceError`` on a connection found closed."""
    if isinstance(exc, CONNECTION_FAULTS):
        return True
    return isinstance(exc, asyncpg.InterfaceError) and conn is not None and _closed(conn)


def is_fault(exc: BaseException, conn: Any = None) -> bool:
    """Whether ``exc`` is a storage fault: a write fault or a connection fault."""
    return isinstance(exc, WRITE_FAULTS) or is_connection_fault(exc, conn)
