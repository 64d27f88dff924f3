"""``user.deleted`` names the deleted user's organization (docs/reference/webhooks.md; ADR 0053):
the event carries it, so its audit row and the webhook fan-out in the same unit of work do not
depend on the user row still being there when the row is written."""

from __future__ import annotations

import json
from datetime import timedelta

from adapters.persistence.memory import MemoryStorage
from application.events.audit import audit_events, record
from application.events.catalog import UserDeleted
from domain.audit import AuditQuery
from domain.webhooks import Webhook
from tests.factories import T0, Make


def _hook(id_: str, org_id: str) -> Webhook:
    return Webhook(id_, org_id, f"https://hooks.example.com/{id_}", ("user.deleted",), "", True,
                   b"sealed", T0, T0)  # fmt: skip


def test_the_audit_row_of_a_deletion_names_the_users_organization() -> None:
    [row] = audit_events([UserDeleted("u1", "admin", "org-b")], T0)
    assert (row.type, row.user_id, row.actor_id, row.org_id) == ("user.deleted", "u1", "admin",
                                                                  "org-b")  # fmt: skip
    assert row.details_dict() == {}


async def test_a_deletion_recorded_after_the_user_is_gone_still_reaches_its_organization() -> None:
    storage, make = MemoryStorage(), Make()
    user = make.user(org_id="org-b")
    async with storage.begin() as uow:
        await uow.users.add(user)
        await uow.webhooks.add(_hook("w-b", "org-b"))
        await uow.webhooks.add(_hook("w-a", "org-a"))
        await uow.commit()
    async with storage.begin() as uow:
        await uow.users.delete(user.id)  # nothing left to look the organization up by
        await record(uow, [UserDeleted(user.id, "admin", user.org_id)], T0)
        await uow.commit()
    async with storage.begin() as uow:
        [row] = await uow.audit.list_page(AuditQuery(type="user.deleted"), None, 10)
        items = await uow.outbox.claim(T0, T0 + timedelta(minutes=1), "claim", 10)
    assert row.org_id == "org-b" and row.user_id == user.id
    [item] = items  # org-a's endpoint gets nothing
    assert item.payload["webhook_id"] == "w-b" and item.payload["type"] == "user.deleted"
    data = json.loads(item.payload["event"])
    assert (data["org_id"], data["user_id"], data["actor_id"]) == ("org-b", user.id, "admin")
