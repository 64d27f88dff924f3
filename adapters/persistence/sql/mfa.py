"""Statements on ``mfa_totp``, ``mfa_recovery_codes`` and ``mfa_challenges`` (``MfaStore``); see
the package for the placeholders. Booleans are written ``TRUE``/``FALSE``/``NOT x``, which
SQLite (3.23+) reads as 1/0."""

# ruff: noqa: S608 - column lists only; values are bound

from __future__ import annotations

from functools import lru_cache

from adapters.persistence.sql import columns as cols

PUT_PENDING = (
    f"INSERT INTO mfa_totp ({cols.MFA_TOTP}) VALUES ($1, $2, FALSE, NULL, $3)"
    " ON CONFLICT (user_id) DO UPDATE SET sealed_secret = excluded.sealed_secret,"
    " last_step = NULL, created_at = excluded.created_at"
    " WHERE NOT mfa_totp.confirmed"
)
"""Store a pending secret, replacing a pending one, leaving a confirmed one alone (no row
changed then)."""
GET_TOTP = f"SELECT {cols.MFA_TOTP} FROM mfa_totp WHERE user_id = $1"
CONFIRM = (
    "UPDATE mfa_totp SET confirmed = TRUE, last_step = $1 WHERE user_id = $2 AND NOT confirmed"
)
LOCK_CONFIRMED = "UPDATE mfa_totp SET confirmed = TRUE WHERE user_id = $1 AND confirmed"
"""Lock user ``$1``'s confirmed secret (a no-op update: one row when MFA is on)."""
CLAIM_STEP = (
    "UPDATE mfa_totp SET last_step = $1 WHERE user_id = $2 AND confirmed"
    " AND (last_step IS NULL OR last_step < $1)"
)
"""Move user ``$2``'s last step to ``$1`` if it is later (a compare-and-set)."""
DELETE_CODES = "DELETE FROM mfa_recovery_codes WHERE user_id = $1"
USE_CODE = "DELETE FROM mfa_recovery_codes WHERE user_id = $1 AND code_hash = $2"
CODES_LEFT = "SELECT count(*) FROM mfa_recovery_codes WHERE user_id = $1"
REMOVE_TOTP = "DELETE FROM mfa_totp WHERE user_id = $1 RETURNING confirmed"
VOID_CHALLENGES = "DELETE FROM mfa_challenges WHERE user_id = $1"
INSERT_CHALLENGE = (
    f"INSERT INTO mfa_challenges ({cols.MFA_CHALLENGES}) VALUES ($1, $2, $3, $4, $5, $6)"
)
FIND_CHALLENGE = f"SELECT {cols.MFA_CHALLENGES} FROM mfa_challenges WHERE token_hash = $1"
TAKE_CHALLENGE = f"DELETE FROM mfa_challenges WHERE token_hash = $1 RETURNING {cols.MFA_CHALLENGES}"
CLAIM_ATTEMPT = (
    "UPDATE mfa_challenges SET failures = failures + 1"
    " WHERE token_hash = $1 AND failures < $2 AND expires_at > $3 RETURNING failures"
)
"""Count one more failure of challenge ``$1`` if below ``$2`` and live at ``$3``."""


@lru_cache(maxsize=32)
def insert_codes(count: int) -> str:
    """The insert of ``count`` recovery codes of one user: ``$1`` the user, ``$2`` ...
    ``$count+1`` the code hashes (one multi-row ``VALUES``, a known hash skipped)."""
    rows = ", ".join(f"($1, ${n})" for n in range(2, count + 2))
    return (
        f"INSERT INTO mfa_recovery_codes (user_id, code_hash) VALUES {rows} ON CONFLICT DO NOTHING"
    )
