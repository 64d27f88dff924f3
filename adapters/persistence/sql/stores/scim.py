"""The SQL SCIM record store (docs/reference/scim.md): tables ``scim_users`` (the kept
attributes as a JSON object) and ``scim_groups`` (migration 0027), each row deleted with its
user or group by the foreign key."""

from __future__ import annotations

import json
from typing import Any

from adapters.persistence.sql.queries import SqlStore
from adapters.persistence.sql.scim import (
    GET_SCIM_GROUP,
    GET_SCIM_USER,
    PUT_SCIM_GROUP,
    PUT_SCIM_USER,
    SCIM_GROUPS_OF_ORG,
    SCIM_USERS_OF_ORG,
)
from application.ports.scim import ScimKind, ScimRecordStore
from domain.errors import NotFound
from domain.scim import ScimRecord

_GET = {"User": GET_SCIM_USER, "Group": GET_SCIM_GROUP}
_OF_ORG = {"User": SCIM_USERS_OF_ORG, "Group": SCIM_GROUPS_OF_ORG}
_PUT = {"User": PUT_SCIM_USER, "Group": PUT_SCIM_GROUP}


def _record(row: Any) -> ScimRecord:
    resource_id, external_id, attributes = row
    if isinstance(attributes, str):
        attributes = json.loads(attributes)
    return ScimRecord(resource_id, external_id, attributes or {})


class SqlScimRecordStore(SqlStore, ScimRecordStore):
    """``ScimRecordStore`` in the current transaction."""

    async def get(self, kind: ScimKind, resource_id: str) -> ScimRecord | None:
        """The record of ``resource_id``, or None."""
        row = await self._q.one(_GET[kind], (resource_id,))
        return None if row is None else _record(row)

    async def of_org(self, kind: ScimKind, org_id: str) -> dict[str, ScimRecord]:
        """The records of ``org_id``'s users or groups."""
        records = [_record(row) for row in await self._q.all(_OF_ORG[kind], (org_id,))]
        return {r.resource_id: r for r in records}

    async def put(self, kind: ScimKind, record: ScimRecord) -> None:
        """Store it (upsert). Raises ``NotFound`` when its user or group does not exist."""
        values: tuple[Any, ...] = (record.resource_id, record.external_id)
        if kind == "User":
            values += (json.dumps(dict(record.attributes), separators=(",", ":")),)
        try:
            await self._q.execute(_PUT[kind], values, guarded=True)
        except Exception as exc:
            if self._d.is_foreign_key_violation(exc):
                raise NotFound(f"{kind.lower()} {record.resource_id} not found") from None
            raise
