"""Statements on ``invitations`` (``InvitationRepo``, migration 0021); see the package for the
placeholders. Every state change is conditional on ``state = $pending`` (bound, as every value)."""

# ruff: noqa: S608 - column lists only; values are bound

from __future__ import annotations

from adapters.persistence.rows.invitations import INVITATIONS
from adapters.persistence.sql.paging import keyset

INSERT = (
    f"INSERT INTO invitations ({INVITATIONS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
)
BY_ID = f"SELECT {INVITATIONS} FROM invitations WHERE id = $1"
BY_TOKEN = f"SELECT {INVITATIONS} FROM invitations WHERE token_hash = $1"
OPEN = (
    f"SELECT {INVITATIONS} FROM invitations"
    " WHERE org_id = $1 AND email = $2 AND state = $3 AND expires_at > $4 LIMIT 1"
)
RENEW = (
    "UPDATE invitations SET token_hash = $2, expires_at = $3, invited_by = $4"
    f" WHERE id = $1 AND state = $5 RETURNING {INVITATIONS}"
)
"""A new link for invitation ``$1`` while it is in state ``$5`` (pending)."""
REVOKE = f"UPDATE invitations SET state = $2 WHERE id = $1 AND state = $3 RETURNING {INVITATIONS}"
"""Invitation ``$1`` to state ``$2`` (revoked) while in state ``$3`` (pending)."""
ACCEPT = (
    "UPDATE invitations SET state = $2, accepted_user_id = $3"
    f" WHERE token_hash = $1 AND state = $4 AND expires_at > $5 RETURNING {INVITATIONS}"
)
"""The invitation of link ``$1`` to state ``$2`` (accepted) by user ``$3`` while in state
``$4`` (pending) and live at ``$5``: one statement, so one of concurrent acceptances wins."""


def page(*, by_org: bool, after: bool) -> str:
    """A page of invitations, of one org when ``by_org``, after a cursor id when ``after``
    (``paging.keyset``; arguments from ``paging.keyset_args``)."""
    return keyset(f"SELECT {INVITATIONS} FROM invitations", "org_id", "id", by_org=by_org,
                  after=after)  # fmt: skip
