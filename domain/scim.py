"""What a SCIM client sent of a user or group beyond what the account holds (RFC 7643 §3.1,
§4; docs/reference/scim.md): its ``externalId`` and, for a user, the kept SCIM attributes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

__all__ = ["ScimRecord"]


@attrs.frozen
class ScimRecord:
    """The SCIM side of the user or group ``resource_id``: ``external_id`` (the client's own
    identifier, RFC 7643 §3.1; None when not sent) and ``attributes`` (for a user, the JSON
    object of its kept attributes as the client last set them — ``name``, ``displayName``,
    ``emails``, ``active``; empty for a group). Goes with its user or group."""

    resource_id: str
    external_id: str | None = None
    attributes: Mapping[str, Any] = attrs.field(factory=dict)
