"""The SQL dialects: statements in ``adapters.persistence.sql`` are written with PostgreSQL's
``$n`` (optionally ``$n::type``); ``render`` gives SQLite's ``?n``. A ``Dialect`` value holds what
else the shared stores (``sql.stores``) need to know of a backend: how it stores times and
booleans, and which driver errors are unique or foreign-key violations (ADR 0039)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, Literal

__all__ = ["Dialect", "DialectName", "render"]

DialectName = Literal["postgres", "sqlite"]

_PLACEHOLDER = re.compile(r"\$([1-9][0-9]*)(?:::[A-Za-z_]+(?:\[\])?)?")
"""``$n`` with an optional type hint (``$2::text``, ``$2::text[]``)."""


@lru_cache(maxsize=1024)
def render(statement: str, dialect: DialectName) -> str:
    """``statement`` with its placeholders in ``dialect``'s form: unchanged for ``postgres``;
    for ``sqlite`` each ``$n`` (type hint included) becomes ``?n``, SQLite's numbered parameter
    (so a placeholder used twice binds the same value, as in PostgreSQL). The statements are
    module constants without string literals, so every ``$`` is a placeholder. Raises
    ``ValueError`` for an unknown dialect. Cached: a statement is rendered once."""
    if dialect == "postgres":
        return statement
    if dialect == "sqlite":
        return _PLACEHOLDER.sub(lambda m: "?" + m.group(1), statement)
    raise ValueError(f"unknown SQL dialect {dialect!r}")


@dataclass(frozen=True, slots=True)
class Dialect:
    """What a SQL backend stores differently; each backend's unit module holds its one value.

    ``to_db``: an aware ``datetime`` in its stored form (raises ``ValueError`` for a naive one);
    ``from_db``: a stored time back as an aware UTC ``datetime`` (None stays None);
    ``bool_to_db``: a ``bool`` in its stored form; ``is_unique_violation`` and
    ``is_foreign_key_violation``: whether a driver error is that constraint's violation (the
    stores translate it to the port's ``Conflict`` or ``NotFound``); ``lock_rows``: appended to
    a ``SELECT`` whose rows the unit will update (``" FOR UPDATE"``, or ``""`` where the unit
    holds the write lock already); ``skip_locked``: likewise, for a ``SELECT`` that claims rows
    other transactions may be claiming at once, skipping theirs instead of waiting (``" FOR
    UPDATE SKIP LOCKED"``, or ``""`` under SQLite's one writer)."""

    name: DialectName
    to_db: Callable[[datetime], Any]
    from_db: Callable[[Any], Any]
    bool_to_db: Callable[[bool], Any]
    is_unique_violation: Callable[[BaseException], bool]
    is_foreign_key_violation: Callable[[BaseException], bool]
    lock_rows: str
    skip_locked: str

    def render(self, statement: str) -> str:
        """``statement`` with this dialect's placeholders (``render``)."""
        return render(statement, self.name)
