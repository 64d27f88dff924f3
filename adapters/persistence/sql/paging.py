"""Keyset pages (the listings of users, groups and clients): the ``WHERE`` holds only the
filters a request gives, so both SQLite and PostgreSQL (with any plan, generic ones included)
seek the index to the cursor instead of reading every row before it (issue 35; a condition
such as ``($2 IS NULL OR id > $2)`` cannot be used as a range)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

__all__ = ["keyset", "keyset_args"]


@lru_cache(maxsize=64)
def keyset(
    select: str,
    org_column: str,
    key: str,
    *,
    by_org: bool,
    after: bool,
    prefix_column: str | None = None,
) -> str:
    """``select`` (a ``SELECT ... FROM t`` without ``WHERE``) narrowed to ``org_column = $1``
    when ``by_org``, to rows whose ``prefix_column`` starts with the next argument when one is
    named (compared with ``substr``, so no ``LIKE`` wildcard applies), to ``key > $n`` when
    ``after``, ordered by ``key``, limited by the last placeholder. The arguments go in that
    order (``keyset_args``)."""
    conditions: list[str] = []
    if by_org:
        conditions.append(f"{org_column} = ${len(conditions) + 1}")
    if prefix_column is not None:
        n = len(conditions) + 1
        conditions.append(f"substr({prefix_column}, 1, length(${n})) = ${n}")
    if after:
        conditions.append(f"{key} > ${len(conditions) + 1}")
    where = " WHERE " + " AND ".join(conditions) if conditions else ""
    return f"{select}{where} ORDER BY {key} LIMIT ${len(conditions) + 1}"


def keyset_args(
    org_id: str | None, after: str | None, limit: int, prefix: str | None = None
) -> tuple[Any, ...]:
    """The arguments of ``keyset(..., by_org=org_id is not None, after=after is not None,
    prefix_column=... if prefix is not None)``; a negative ``limit`` counts as 0."""
    return (*(v for v in (org_id, prefix, after) if v is not None), max(0, limit))
