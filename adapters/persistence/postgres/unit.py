"""The PostgreSQL unit: one pooled connection per unit of work (from the storage's
``ConnectionSource``), storage faults translated (``StorageFault``, docs/reference/operations.md,
ADR 0014) and reads retried once on a fresh connection; it offers the shared stores
``SqlQueries`` with PostgreSQL's ``Dialect`` (ADR 0039)."""

# Only module constants (column lists) are interpolated into SQL; values are always bound.

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any, TypeVar

import asyncpg
from asyncpg.transaction import Transaction

from adapters.persistence.postgres.connections import ConnectionSource
from adapters.persistence.postgres.faults import (
    CONNECTION_RETRY_AFTER,
    is_connection_fault,
    is_fault,
    log,
)
from adapters.persistence.sql.dialect import Dialect
from adapters.persistence.sql.purge import bounded_delete
from adapters.persistence.times import require_aware
from domain.errors import FieldError, StorageFault, ValidationFailed

T = TypeVar("T")


def _same(value: Any) -> Any:
    return value


POSTGRES = Dialect(
    "postgres",
    to_db=require_aware,
    from_db=_same,
    bool_to_db=bool,
    is_unique_violation=lambda exc: isinstance(exc, asyncpg.UniqueViolationError),
    is_foreign_key_violation=lambda exc: isinstance(exc, asyncpg.ForeignKeyViolationError),
    lock_rows=" FOR UPDATE",
    skip_locked=" FOR UPDATE SKIP LOCKED",
)
"""PostgreSQL's ``Dialect``: times as ``timestamptz`` (aware), booleans as ``boolean``."""


def _affected(status: str) -> int:
    """Rows affected, from a command tag such as ``DELETE 3`` or ``INSERT 0 1``."""
    try:
        return int(status.rsplit(" ", 1)[-1])
    except ValueError:
        return 0


@contextmanager
def _translated() -> Iterator[None]:
    """Translate a driver data error (U+0000 in ``text``, a number out of a column's range ...)
    into the port's ``ValidationFailed``: the value cannot be stored or looked up here
    (design.md: adapters translate driver errors before they cross the port)."""
    try:
        yield
    except asyncpg.DataError:
        raise ValidationFailed([FieldError("", "a value cannot be stored or looked up")]) from None


class PostgresUnit:
    """The pooled connection a unit of work (or one ``LoginAttempts`` call) runs on.

    ``transactional``: statements run in one transaction, begun lazily before the first
    statement (and again after each ``commit()``); else each statement stands alone. Every
    statement goes through ``run``, which turns storage faults into ``StorageFault``, discards
    the connection, and retries a read (or a write whose ``BEGIN`` failed) once on a fresh
    connection when nothing was written since the transaction began. After a fault that was not
    retried the unit is broken: every later statement raises ``StorageFault`` too.
    """

    def __init__(self, connections: ConnectionSource, conn: Any, *, transactional: bool) -> None:
        self._connections = connections
        self._conn: Any = conn
        self._transactional = transactional
        self._transaction: Transaction | None = None
        self._wrote = False

    def _connection(self) -> Any:
        if self._conn is None:
            raise StorageFault(
                "the database connection was lost earlier in this request",
                CONNECTION_RETRY_AFTER,
            )
        return self._conn

    async def run(self, op: Callable[[Any], Awaitable[T]], *, write: bool) -> T:
        """``await op(connection)`` in the unit's transaction. ``write``: ``op`` may change
        data. A lost connection is retried once, on a fresh one, when nothing can be lost by
        it: the transaction has written nothing and ``op`` is a read, or never started (its
        ``BEGIN`` failed). Raises ``StorageFault``, ``ValidationFailed`` (a driver data error),
        or what ``op`` raises (constraint violations, which the caller translates)."""
        retried = False
        while True:
            conn = self._connection()
            wrote_before, started = self._wrote, False
            try:
                with _translated():
                    if self._transactional and self._transaction is None:
                        transaction = conn.transaction()
                        await transaction.start()
                        self._transaction = transaction
                    started = True
                    self._wrote = wrote_before or write
                    return await op(conn)
            except Exception as exc:
                if not is_fault(exc, conn):
                    raise
                lost = is_connection_fault(exc, conn)
                fault = self._connections.fault(exc)
                await self._discard(lost)
                harmless = not wrote_before and not (write and started)
                if retried or not lost or not harmless:
                    raise fault from None
                retried = True
                log.info("retrying on a fresh connection")
                self._conn = await self._connections.acquire()
                self._wrote = False

    # ``SqlQueries`` (adapters.persistence.sql.queries): reads may be retried on a fresh
    # connection, writes never; a guarded write runs under a savepoint.

    dialect = POSTGRES

    async def all(self, sql: str, params: Sequence[Any] = (), *, write: bool = False) -> list[Any]:
        """Every row of the statement (``SqlQueries.all``)."""
        return list(await self.run(lambda c: c.fetch(sql, *params), write=write))

    async def one(self, sql: str, params: Sequence[Any] = (), *, write: bool = False) -> Any:
        """The first row of the statement, or None (``SqlQueries.one``)."""
        return await self.run(lambda c: c.fetchrow(sql, *params), write=write)

    async def execute(self, sql: str, params: Sequence[Any] = (), *, guarded: bool = False) -> int:
        """Run an INSERT, UPDATE or DELETE; the rows it changed (``SqlQueries.execute``)."""
        if not guarded:
            return _affected(await self.run(lambda c: c.execute(sql, *params), write=True))

        async def op(conn: Any) -> int:
            async with conn.transaction():
                return _affected(await conn.execute(sql, *params))

        return await self.run(op, write=True)

    async def purge(
        self, table: str, condition: str, params: Sequence[Any], limit: int | None
    ) -> int:
        """Delete up to ``limit`` rows of ``table`` meeting ``condition``; the rows deleted."""
        return await self.execute(bounded_delete("postgres", table, condition, limit), params)

    async def commit(self) -> None:
        """Commit the transaction (if one began); the next statement begins another. Raises
        ``StorageFault`` — its outcome unknown if the connection was lost during the commit."""
        transaction, self._transaction = self._transaction, None
        wrote, self._wrote = self._wrote, False
        if transaction is None:
            return
        conn = self._connection()
        try:
            await transaction.commit()
        except Exception as exc:
            if not is_fault(exc, conn):
                raise
            lost = is_connection_fault(exc, conn)
            fault = self._connections.fault(exc, commit=wrote)
            await self._discard(lost)
            raise fault from None

    async def _discard(self, lost: bool) -> None:
        """Terminate the connection (it is not handed out again) and give its slot back.
        ``lost``: the connection was lost — the server may have restarted, so every pooled
        connection is suspect: each is replaced by a new one at its next use (a retried read
        never gets one made before the fault)."""
        conn, self._conn = self._conn, None
        self._transaction = None
        if conn is not None:
            with suppress(Exception):
                conn.terminate()
            await self._connections.release(conn)
        if lost:
            await self._connections.expire_all()

    async def close(self) -> None:
        """Roll back what was not committed and give the connection back to the pool; a
        connection that cannot roll back is discarded. Never raises."""
        conn, transaction = self._conn, self._transaction
        self._conn = self._transaction = None
        if conn is None:
            return
        try:
            if transaction is not None:
                await transaction.rollback()
        except Exception as exc:
            log.info("discarding a connection that cannot roll back: %s", type(exc).__name__)
            with suppress(Exception):
                conn.terminate()
        await self._connections.release(conn)
