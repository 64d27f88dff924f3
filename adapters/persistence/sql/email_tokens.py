"""Statements on ``email_tokens`` (``EmailTokenStore``); see the package for the placeholders."""

# ruff: noqa: S608 - column lists only; values are bound

from __future__ import annotations

from adapters.persistence.sql import columns as cols

INSERT = f"INSERT INTO email_tokens ({cols.EMAIL_TOKENS}) VALUES ($1, $2, $3, $4, $5, $6)"
FIND = f"SELECT {cols.EMAIL_TOKENS} FROM email_tokens WHERE token_hash = $1 AND purpose = $2"
TAKE = (
    f"DELETE FROM email_tokens WHERE token_hash = $1 AND purpose = $2 RETURNING {cols.EMAIL_TOKENS}"
)
VOID = "DELETE FROM email_tokens WHERE user_id = $1 AND purpose = $2"
