"""Events of SCIM provisioning (docs/reference/scim.md). Ids only: a SCIM client's changes to
existing users and groups use the account events (``UserDisabled``, ``GroupCreated``...) with the
client as ``actor_id`` (``scim:<client_id>``)."""

from __future__ import annotations

import attrs

from application.events.catalog import Event

__all__ = ["ProvisionedEmailChanged", "UserProvisioned"]


@attrs.frozen
class UserProvisioned(Event):
    """The SCIM client ``actor_id`` (``scim:<client_id>``) created the user ``user_id`` in
    ``org_id``: audited as ``user.registered`` with that actor and ``{"via": "scim"}``."""

    user_id: str
    org_id: str
    actor_id: str


@attrs.frozen
class ProvisionedEmailChanged(Event):
    """The SCIM client ``actor_id`` changed the ``userName`` (the email) of ``user_id``: audited
    as ``email.changed`` with that actor and ``{"via": "scim"}``. Never an address."""

    user_id: str
    actor_id: str
