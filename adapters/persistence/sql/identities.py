"""Statements on ``federated_identities``, ``federation_flows`` and ``federation_nonces``
(``FederatedIdentityRepo``, migrations 0016, 0018 and 0021); see the package for the
placeholders."""

# ruff: noqa: S608 - column lists only; values are bound

from __future__ import annotations

IDENTITIES = (
    "issuer, subject, provider, user_id, email, linked_at, last_used_at, email_was_verified"
)
"""The columns of ``federated_identities`` in the order of ``FederatedIdentity``'s fields."""
FLOWS = (
    "state_hash, provider, browser_hash, nonce, code_verifier, return_to, link_user_id,"
    " created_at, expires_at, upstream_issuer, upstream_subject, upstream_email, invitation_hash"
)
"""The columns of ``federation_flows`` in the order of ``FederationFlow``'s fields."""

INSERT = f"INSERT INTO federated_identities ({IDENTITIES}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
FIND = f"SELECT {IDENTITIES} FROM federated_identities WHERE issuer = $1 AND subject = $2"
OF_USER = (
    f"SELECT {IDENTITIES} FROM federated_identities WHERE user_id = $1 ORDER BY linked_at, provider"
)
RECORD_USE = (
    "UPDATE federated_identities SET last_used_at = $3, email = $4"
    " WHERE issuer = $1 AND subject = $2"
)
DELETE = (
    f"DELETE FROM federated_identities WHERE user_id = $1 AND provider = $2 RETURNING {IDENTITIES}"
)
REMOVE_UNPROVEN = (
    f"DELETE FROM federated_identities WHERE user_id = $1 AND NOT email_was_verified"
    f" RETURNING {IDENTITIES}"
)
INSERT_FLOW = (
    f"INSERT INTO federation_flows ({FLOWS})"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
)
TAKE_FLOW = (
    f"DELETE FROM federation_flows WHERE state_hash = $1 AND browser_hash = $2 RETURNING {FLOWS}"
)
SPEND_NONCE = (
    "INSERT INTO federation_nonces (issuer, nonce_hash, expires_at) VALUES ($1, $2, $3)"
    " ON CONFLICT (issuer, nonce_hash) DO UPDATE SET expires_at = excluded.expires_at"
    " WHERE federation_nonces.expires_at <= $4 RETURNING nonce_hash"
)
"""Remember a nonce until ``$3``; a row comes back only when it was not live at ``$4``."""
