"""Statements on ``audit_events`` (``AuditLog``); see the package for the placeholders."""

# ruff: noqa: S608 - column lists and fixed clauses only; values are bound

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from adapters.persistence.sql import columns as cols
from domain.audit import AuditQuery

INSERT = (
    f"INSERT INTO audit_events ({cols.AUDIT_EVENTS}) VALUES ($1, $2, $3, $4, $5,"
    " COALESCE($6, (SELECT org_id FROM users WHERE id = $5)), $7, $8, $9::jsonb)"
)
"""An event (the values of ``cols.AUDIT_EVENTS``, ``details`` as JSON text); a NULL ``org_id``
takes the user's."""
BEFORE = "occurred_at < $1"
"""The purge condition: occurred before ``$1``."""


def filters(
    query: AuditQuery, before: str | None, when: Callable[[Any], Any] = lambda at: at
) -> tuple[str, list[Any]]:
    """``(WHERE clause, parameters)`` for ``query`` and the keyset bound ``before``; ``when``
    converts ``query.since`` to its stored form."""
    clauses: list[str] = []
    params: list[Any] = []
    since = None if query.since is None else when(query.since)
    for column, value in (
        ("id <", before),
        ("org_id =", query.org_id),
        ("user_id =", query.user_id),
        ("type =", query.type),
        ("occurred_at >=", since),
    ):
        if value is not None:
            params.append(value)
            clauses.append(f"{column} ${len(params)}")
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def page(
    query: AuditQuery, before: str | None, limit: int, when: Callable[[Any], Any] = lambda at: at
) -> tuple[str, list[Any]]:
    """``(statement, parameters)`` reading up to ``limit`` events matching ``query`` with
    ``id < before``, ids descending (see ``filters``)."""
    where, params = filters(query, before, when)
    params.append(limit)
    statement = (
        f"SELECT {cols.AUDIT_EVENTS} FROM audit_events{where} ORDER BY id DESC LIMIT ${len(params)}"
    )
    return statement, params
