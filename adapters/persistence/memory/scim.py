"""The in-memory SCIM record store over a unit's working copy (docs/reference/scim.md)."""

from __future__ import annotations

from adapters.persistence.memory.unit import MemoryUnit
from application.ports.scim import ScimKind, ScimRecordStore
from domain.errors import NotFound
from domain.scim import ScimRecord


class MemoryScimRecordStore(ScimRecordStore):
    """``ScimRecordStore`` over the working copy: tables ``scim_users`` and ``scim_groups``."""

    def __init__(self, stage: MemoryUnit) -> None:
        self._s = stage

    @staticmethod
    def _table(kind: ScimKind) -> str:
        return "scim_users" if kind == "User" else "scim_groups"

    async def get(self, kind: ScimKind, resource_id: str) -> ScimRecord | None:
        """The record of ``resource_id``, or None."""
        found: ScimRecord | None = getattr(self._s.view, self._table(kind)).get(resource_id)
        return found

    async def of_org(self, kind: ScimKind, org_id: str) -> dict[str, ScimRecord]:
        """The records of ``org_id``'s users or groups."""
        owners = self._s.view.users if kind == "User" else self._s.view.groups
        records: dict[str, ScimRecord] = getattr(self._s.view, self._table(kind))
        return {k: r for k, r in records.items() if k in owners and owners[k].org_id == org_id}

    async def put(self, kind: ScimKind, record: ScimRecord) -> None:
        """Store it. Raises ``NotFound`` when its user or group does not exist."""
        owners = self._s.view.users if kind == "User" else self._s.view.groups
        if record.resource_id not in owners:
            raise NotFound(f"{kind.lower()} {record.resource_id} not found")
        if kind == "Group":
            record = ScimRecord(record.resource_id, record.external_id)
        self._s.write(self._table(kind))[record.resource_id] = record
