"""``SqlQueries``: what a SQL backend's unit of work offers the shared stores (``sql.stores``),
its parameter passing and fault handling hidden behind it (ADR 0039), and ``SqlStore``, the
base of every store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from adapters.persistence.sql.dialect import Dialect

__all__ = ["SKIP_CONFLICT", "SqlQueries", "SqlStore", "SqlUnit"]

SKIP_CONFLICT = " ON CONFLICT DO NOTHING"
"""Appended to an insert that may fail on purpose: no row is inserted (a count of 0) instead of
an error, so the transaction stays usable without a savepoint."""


class SqlQueries(Protocol):
    """Statements (written with the ``$n`` placeholders of ``adapters.persistence.sql``) run in
    the unit's transaction. Each raises ``StorageFault`` for a storage fault and lets a
    constraint violation through as the driver raised it (``Dialect.is_unique_violation``)."""

    @property
    def dialect(self) -> Dialect:
        """The backend's ``Dialect``."""
        ...

    async def all(self, sql: str, params: Sequence[Any] = (), *, write: bool = False) -> list[Any]:
        """Every row of the statement (``write``: it changes data, ``DELETE ... RETURNING``:
        never retried)."""
        ...

    async def one(self, sql: str, params: Sequence[Any] = (), *, write: bool = False) -> Any:
        """The first row of the statement, or None (``write`` as for ``all``)."""
        ...

    async def execute(self, sql: str, params: Sequence[Any] = (), *, guarded: bool = False) -> int:
        """Run an INSERT, UPDATE or DELETE; the rows it changed. ``guarded``: a constraint
        violation it raises leaves the unit usable (a savepoint where the backend needs one)."""
        ...

    async def purge(
        self, table: str, condition: str, params: Sequence[Any], limit: int | None
    ) -> int:
        """Delete up to ``limit`` rows (all with None) of ``table`` meeting ``condition``
        (``sql.purge.bounded_delete``); the rows deleted."""
        ...


class SqlUnit(SqlQueries, Protocol):
    """A backend's unit: ``SqlQueries`` and the commit of what it did so far."""

    async def commit(self) -> None:
        """Commit the unit's transaction (the next statement begins another). Raises
        ``StorageFault``."""
        ...


class SqlStore:
    """The base of the shared stores: the unit's ``SqlQueries`` (``_q``) and its ``Dialect``
    (``_d``)."""

    def __init__(self, queries: SqlQueries) -> None:
        self._q = queries
        self._d = queries.dialect
