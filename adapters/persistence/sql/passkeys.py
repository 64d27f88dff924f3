"""Statements on ``passkeys``, ``webauthn_user_handles`` and ``webauthn_ceremonies``
(``PasskeyRepo``); see the package for the placeholders."""

# ruff: noqa: S608 - column lists only; values are bound

from __future__ import annotations

from adapters.persistence.rows.passkeys import CEREMONIES, PASSKEY_CHANGES, PASSKEYS


def _marks(count: int) -> str:
    return ", ".join(f"${n}" for n in range(1, count + 1))


INSERT = f"INSERT INTO passkeys ({PASSKEYS}) VALUES ({_marks(len(PASSKEYS.split(',')))})"
"""A passkey: the values of ``PASSKEYS`` (``rows.passkeys.passkey_params``)."""
BY_ID = f"SELECT {PASSKEYS} FROM passkeys WHERE id = $1"
BY_CREDENTIAL_ID = f"SELECT {PASSKEYS} FROM passkeys WHERE credential_id = $1"
OF_USER = f"SELECT {PASSKEYS} FROM passkeys WHERE user_id = $1 ORDER BY created_at DESC, id DESC"
ID_LENGTHS = "SELECT length(credential_id) FROM passkeys LIMIT $1"
"""A sample of the stored credential ids' byte lengths (``length`` of a BLOB / bytea)."""
UPDATE = (
    "UPDATE passkeys SET "
    + ", ".join(f"{c} = ${n}" for n, c in enumerate(PASSKEY_CHANGES, 1))
    + f" WHERE id = ${len(PASSKEY_CHANGES) + 1}"
)
"""The values of ``PASSKEY_CHANGES`` (``rows.passkeys.change_params``), then the id."""
RECORD_USE = (
    "UPDATE passkeys SET sign_count = $1, backed_up = $2, last_used_at = $3"
    " WHERE id = $4 AND sign_count = $5 AND NOT suspected_clone"
)
"""``PasskeyRepo.record_use``'s compare-and-set: ``rows.passkeys.use_params``, then the id and
the old counter."""
DELETE = "DELETE FROM passkeys WHERE id = $1"
ADD_USER_HANDLE = (
    "INSERT INTO webauthn_user_handles (user_id, handle) VALUES ($1, $2)"
    " ON CONFLICT (user_id) DO NOTHING"
)
USER_HANDLE = "SELECT handle FROM webauthn_user_handles WHERE user_id = $1"
USER_OF_HANDLE = "SELECT user_id FROM webauthn_user_handles WHERE handle = $1"
INSERT_CEREMONY = f"INSERT INTO webauthn_ceremonies ({CEREMONIES}) VALUES ({_marks(7)})"
TAKE_CEREMONY = f"DELETE FROM webauthn_ceremonies WHERE id = $1 RETURNING {CEREMONIES}"
