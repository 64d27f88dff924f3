"""The placeholders of the SQL dialects: statements in ``adapters.persistence.sql`` are written
with PostgreSQL's ``$n`` (optionally ``$n::type``); ``render`` gives SQLite's ``?n``."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

__all__ = ["Dialect", "render"]

Dialect = Literal["postgres", "sqlite"]

_PLACEHOLDER = re.compile(r"\$([1-9][0-9]*)(?:::[A-Za-z_]+(?:\[\])?)?")
"""``$n`` with an optional type hint (``$2::text``, ``$2::text[]``)."""


@lru_cache(maxsize=1024)
def render(statement: str, dialect: Dialect) -> str:
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
