"""Housekeeping's deletes in bounded batches (docs/reference/operations.md; issue 35): one statement
text per dialect, so that a purge of millions of rows commits as it goes instead of holding locks
and vacuum back in one transaction."""

from __future__ import annotations

__all__ = ["EXPIRED", "bounded_delete"]

EXPIRED = "expires_at <= $1"
"""The purge condition of the tables with an ``expires_at``: expired by ``$1``."""

_ROW_IDS = {
    # A TID scan: the subquery's row ids are fetched directly (``ctid IN (...)`` would plan a
    # semi-join over the whole table).
    "postgres": "ctid = ANY(ARRAY(SELECT ctid FROM {table} WHERE {condition} LIMIT {limit}))",
    "sqlite": "rowid IN (SELECT rowid FROM {table} WHERE {condition} LIMIT {limit})",
}


def bounded_delete(dialect: str, table: str, condition: str, limit: int | None) -> str:
    """``DELETE FROM table WHERE condition`` touching at most ``limit`` rows (all with None).

    ``dialect`` is ``postgres`` or ``sqlite``; ``table`` and ``condition`` are module constants
    of the caller (never input), ``condition`` with the package's ``$n`` placeholders (rendered
    by the caller's unit); ``limit`` is an int (inlined: it is not input either). Raises
    ``ValueError`` for a limit below 1.
    """
    if limit is None:
        return f"DELETE FROM {table} WHERE {condition}"  # noqa: S608 (constants only)
    if int(limit) < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    rows = _ROW_IDS[dialect].format(table=table, condition=condition, limit=int(limit))
    return f"DELETE FROM {table} WHERE {rows}"  # noqa: S608 (constants only)
