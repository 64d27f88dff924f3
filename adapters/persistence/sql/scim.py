"""Statements on ``scim_users`` and ``scim_groups`` (SCIM records, docs/reference/scim.md;
migration 0027); see the package for the placeholders. Each reads three columns, the group's
attributes as NULL."""

from __future__ import annotations

GET_SCIM_USER = "SELECT user_id, external_id, attributes FROM scim_users WHERE user_id = $1"
"""The record of user ``$1``."""
GET_SCIM_GROUP = "SELECT group_id, external_id, NULL FROM scim_groups WHERE group_id = $1"
"""The record of group ``$1``."""
SCIM_USERS_OF_ORG = (
    "SELECT s.user_id, s.external_id, s.attributes FROM scim_users s"
    " JOIN users u ON u.id = s.user_id WHERE u.org_id = $1"
)
"""The records of the users of organization ``$1``."""
SCIM_GROUPS_OF_ORG = (
    "SELECT s.group_id, s.external_id, NULL FROM scim_groups s"
    " JOIN groups g ON g.id = s.group_id WHERE g.org_id = $1"
)
"""The records of the groups of organization ``$1``."""
PUT_SCIM_USER = (
    "INSERT INTO scim_users (user_id, external_id, attributes) VALUES ($1, $2, $3)"
    " ON CONFLICT (user_id) DO UPDATE SET external_id = excluded.external_id,"
    " attributes = excluded.attributes"
)
"""Store the record of user ``$1`` (upsert): external id ``$2``, attributes ``$3`` (JSON)."""
PUT_SCIM_GROUP = (
    "INSERT INTO scim_groups (group_id, external_id) VALUES ($1, $2)"
    " ON CONFLICT (group_id) DO UPDATE SET external_id = excluded.external_id"
)
"""Store the record of group ``$1`` (upsert): external id ``$2``."""
