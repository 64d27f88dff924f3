"""Statements on ``oauth_clients``, ``revoked_access_tokens`` and ``dpop_proofs``
(``ClientRepo``); see the package for the placeholders."""

# ruff: noqa: S608 - column lists only; values are bound

from __future__ import annotations

from adapters.persistence.rows.clients import CLIENT_UPDATE, CLIENTS
from adapters.persistence.sql.paging import keyset

_MARKS = ", ".join(f"${n}" for n in range(1, len(CLIENTS.split(",")) + 1))
_SETS = ", ".join(f"{c.strip()} = ${n}" for n, c in enumerate(CLIENT_UPDATE.split(","), 2))

INSERT = f"INSERT INTO oauth_clients ({CLIENTS}) VALUES ({_MARKS})"
"""A client: the values of ``CLIENTS`` (``rows.clients.client_params``)."""
BY_ID = f"SELECT {CLIENTS} FROM oauth_clients WHERE id = $1"
UPDATE = f"UPDATE oauth_clients SET {_SETS} WHERE id = $1"
"""Every column of client ``$1``: the values of ``CLIENTS`` as for ``INSERT``."""
DELETE = "DELETE FROM oauth_clients WHERE id = $1"


def page(*, by_org: bool, after: bool) -> str:
    """A page of clients, of one org when ``by_org``, after a cursor id when ``after``
    (``paging.keyset``; arguments from ``paging.keyset_args``)."""
    return keyset(
        f"SELECT {CLIENTS} FROM oauth_clients", "org_id", "id", by_org=by_org, after=after
    )


REVOKE = (
    "INSERT INTO revoked_access_tokens (jti, client_id, expires_at) VALUES ($1, $2, $3)"
    " ON CONFLICT (jti) DO NOTHING"
)
IS_REVOKED = "SELECT 1 FROM revoked_access_tokens WHERE jti = $1"
CLAIM_PROOF_JTI = (
    "INSERT INTO dpop_proofs (jti, expires_at) VALUES ($1, $2) ON CONFLICT (jti) DO NOTHING"
)
"""Remember a DPoP proof's ``jti``; no row inserted for one already remembered (a replay)."""
TOKENS_OF_CLIENT = (
    "DELETE FROM refresh_tokens WHERE family_id IN (SELECT id FROM sessions WHERE client_id = $1)"
)
"""Delete the refresh tokens of every session client ``$1`` started (before deleting it)."""
SESSIONS_OF_CLIENT = "DELETE FROM sessions WHERE client_id = $1"
"""End every session client ``$1`` started (hosted sessions go by cascade)."""
