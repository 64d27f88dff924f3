"""Statements on ``federated_identities`` and ``federation_flows`` (``FederatedIdentityRepo``,
migration 0016); see the package for the placeholders."""

# ruff: noqa: S608 - column lists only; values are bound

from __future__ import annotations

IDENTITIES = "issuer, subject, provider, user_id, email, linked_at, last_used_at"
"""The columns of ``federated_identities`` in the order of ``FederatedIdentity``'s fields."""
FLOWS = (
    "state_hash, provider, browser_hash, nonce, code_verifier, return_to, link_user_id,"
    " created_at, expires_at"
)
"""The columns of ``federation_flows`` in the order of ``FederationFlow``'s fields."""

INSERT = f"INSERT INTO federated_identities ({IDENTITIES}) VALUES ($1, $2, $3, $4, $5, $6, $7)"
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
INSERT_FLOW = f"INSERT INTO federation_flows ({FLOWS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
TAKE_FLOW = f"DELETE FROM federation_flows WHERE state_hash = $1 RETURNING {FLOWS}"
