"""Statements on ``refresh_tokens`` and ``rotated_refresh_tokens`` (``TokenStore``); see the
package for the placeholders."""

# ruff: noqa: S608 - column lists only; values are bound

from __future__ import annotations

from adapters.persistence.sql import columns as cols
from adapters.persistence.sql.queries import SKIP_CONFLICT

INSERT_IF_USER = (
    f"INSERT INTO refresh_tokens ({cols.TOKENS})"
    " SELECT $1::text, $2::text, $3::text, $4::timestamptz, $5::timestamptz,"
    " $6::timestamptz WHERE EXISTS (SELECT 1 FROM users WHERE id = $2::text)" + SKIP_CONFLICT
)
"""A live token (the values of ``cols.TOKENS``); nothing is inserted for a missing user or a
known hash (no error: the transaction stays usable). The type hints are PostgreSQL's (a bare
``SELECT`` list has no column to infer them from); SQLite's rendering drops them."""
TAKE = f"DELETE FROM refresh_tokens WHERE token_hash = $1 RETURNING {cols.TOKENS}"
FIND = f"SELECT {cols.TOKENS} FROM refresh_tokens WHERE token_hash = $1"
REMEMBER_ROTATED = (
    f"INSERT INTO rotated_refresh_tokens ({cols.ROTATED})"
    " VALUES ($1, $2, $3, $4, $5, $6, $7)" + cols.ROTATED_UPSERT
)
"""Remember a rotated token (``cols.TOKENS`` and ``rotated_at``), replacing an earlier record
of the same hash."""
FIND_ROTATED = f"SELECT {cols.TOKENS} FROM rotated_refresh_tokens WHERE token_hash = $1"
CLAIM_REUSE = (
    "UPDATE rotated_refresh_tokens SET reuse_count = reuse_count + 1"
    " WHERE token_hash = $1 AND rotated_at >= $2 AND reuse_count < $3"
    f" RETURNING {cols.TOKENS}"
)
"""Count one more reuse of hash ``$1`` if rotated at or after ``$2`` and reused fewer than
``$3`` times (a compare-and-set)."""
END_FAMILY = "DELETE FROM refresh_tokens WHERE family_id = $1"
END_USER = "DELETE FROM refresh_tokens WHERE user_id = $1"
END_USER_OTHERS = "DELETE FROM refresh_tokens WHERE user_id = $1 AND family_id <> $2"
"""Delete user ``$1``'s refresh tokens but those of session ``$2``."""
