"""Statements on ``groups`` and ``group_members`` (``GroupRepo``); see the package for the
placeholders."""

# ruff: noqa: S608 - column lists only; values are bound

from __future__ import annotations

from adapters.persistence.sql import columns as cols
from adapters.persistence.sql.paging import keyset

INSERT = "INSERT INTO groups (id, name, org_id, created_at) VALUES ($1, $2, $3, $4)"
BY_ID = f"{cols.GROUP_SUMMARY} WHERE g.id = $1"
"""The group with its member count."""
RENAME = "UPDATE groups SET name = $1 WHERE id = $2"
DELETE = "DELETE FROM groups WHERE id = $1"


def page(*, by_org: bool, after: bool) -> str:
    """A page of group summaries, of one org when ``by_org``, after a cursor id when ``after``
    (``paging.keyset``; arguments from ``paging.keyset_args``)."""
    return keyset(cols.GROUP_SUMMARY, "g.org_id", "g.id", by_org=by_org, after=after)


ADD_MEMBER = (
    "INSERT INTO group_members (group_id, user_id, created_at) VALUES ($1, $2, $3)"
    " ON CONFLICT (group_id, user_id) DO NOTHING"
)
REMOVE_MEMBER = "DELETE FROM group_members WHERE group_id = $1 AND user_id = $2"
MEMBERS = (
    f"SELECT {cols.MEMBERS} FROM group_members m JOIN users u ON u.id = m.user_id"
    " WHERE m.group_id = $1 ORDER BY u.id"
)
GROUPS_OF = "SELECT group_id FROM group_members WHERE user_id = $1 ORDER BY group_id"
LEAVE_ORG = (
    "DELETE FROM group_members WHERE user_id = $1"
    " AND group_id IN (SELECT id FROM groups WHERE org_id = $2)"
)
"""Remove user ``$1`` from every group of org ``$2``."""
