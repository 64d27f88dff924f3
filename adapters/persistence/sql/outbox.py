"""Statements on ``outbox`` (``OutboxStore``, docs/adr/0049-durable-outbox.md); see the package
for the placeholders."""

# ruff: noqa: S608 - column lists only; values are bound

from __future__ import annotations

COLUMNS = "id, kind, payload, created_at, due_at, attempts, claimed_until, claim, last_error"
"""The columns of ``outbox`` in the order of ``OutboxItem``'s fields."""

INSERT = f"INSERT INTO outbox ({COLUMNS}) VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7, $8, $9)"
CLAIMABLE = (
    "SELECT id FROM outbox WHERE due_at <= $1 AND (claimed_until IS NULL OR claimed_until <= $1)"
    " ORDER BY due_at, id LIMIT $2"
)
"""The ids of at most ``$2`` items claimable at ``$1`` (due, free or with a lapsed lease), oldest
``due_at`` first; the store appends ``Dialect.skip_locked``, so concurrent claimers on
PostgreSQL skip each other's rows instead of waiting for them."""
CLAIM = f"UPDATE outbox SET claimed_until = $2, claim = $3 WHERE id = $1 RETURNING {COLUMNS}"
"""Claim item ``$1`` for ``$3`` until ``$2`` (in the unit that selected it)."""
FINISH = "DELETE FROM outbox WHERE id = $1 AND claim = $2"
RETRY = (
    "UPDATE outbox SET due_at = $3, attempts = $4, last_error = $5, claimed_until = NULL,"
    " claim = NULL WHERE id = $1 AND claim = $2"
)
BY_ID = f"SELECT {COLUMNS} FROM outbox WHERE id = $1"
COUNT = "SELECT count(*) FROM outbox"
