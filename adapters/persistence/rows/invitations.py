"""Rows of ``invitations`` ↔ ``Invitation``, for both SQL backends; ``time`` converts a time
(SQLite: microseconds; PostgreSQL: as is). ``group_ids`` are stored as a JSON array."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from domain.invitations import Invitation, InvitationState
from domain.model import Role

Convert = Callable[[Any], Any]

INVITATIONS = (
    "id, org_id, email, role, group_ids, invited_by, created_at, expires_at, token_hash, state,"
    " accepted_user_id"
)
"""The columns of ``invitations`` in the order of ``Invitation``'s fields."""


def invitation_params(invitation: Invitation, time: Convert) -> tuple[Any, ...]:
    """The values of ``sql.invitations.INSERT``."""
    i = invitation
    return (i.id, i.org_id, i.email, i.role.value, json.dumps(list(i.group_ids)), i.invited_by,
            time(i.created_at), time(i.expires_at), i.token_hash, i.state.value,
            i.accepted_user_id)  # fmt: skip


def invitation_row(row: Sequence[Any], time: Convert) -> Invitation:
    """The ``Invitation`` of a row of ``INVITATIONS``."""
    (id_, org_id, email, role, group_ids, invited_by, created_at, expires_at, token_hash, state,
     accepted_user_id) = row  # fmt: skip
    return Invitation(id_, org_id, email, Role(role), tuple(json.loads(group_ids)), invited_by,
                      time(created_at), time(expires_at), token_hash, InvitationState(state),
                      accepted_user_id)  # fmt: skip
