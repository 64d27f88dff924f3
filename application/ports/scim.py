"""The port of SCIM records (``domain.scim.ScimRecord``; docs/reference/scim.md), reached through
the unit of work as ``uow.scim``. See ``application.ports`` for the conventions every port
follows (``StorageFault``)."""

from __future__ import annotations

from typing import Literal, Protocol

from domain.scim import ScimRecord

ScimKind = Literal["User", "Group"]
"""Whose records: users' or groups' (RFC 7643 §4 resource types)."""


class ScimRecordStore(Protocol):
    """One record per user or group at most; deleting the user or group deletes its record."""

    async def get(self, kind: ScimKind, resource_id: str) -> ScimRecord | None:
        """The record of the user or group ``resource_id``, or None."""
        ...

    async def of_org(self, kind: ScimKind, org_id: str) -> dict[str, ScimRecord]:
        """The records of every user or group of ``org_id``, by resource id."""
        ...

    async def put(self, kind: ScimKind, record: ScimRecord) -> None:
        """Store ``record`` in place of any earlier one of its resource (a group's
        ``attributes`` are not kept). Raises ``NotFound`` when no such user or group exists."""
        ...


__all__ = ["ScimKind", "ScimRecordStore"]
