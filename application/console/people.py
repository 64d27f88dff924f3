"""Who the audit log's rows name, for the admin console (docs/reference/console.md): the emails
behind their ``actor_id`` and ``user_id``.

Access by ``domain.policy``: ``LIST_AUDIT_EVENTS`` (org_admin and superadmin; viewer and operator
→ ``Forbidden``), and an email only of a user the caller may see (``in_scope``: an org_admin, its
own organization's); any other id — a deleted user, another organization's, the command line's
operator — stays an id.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from application.ports import Storage
from domain import policy
from domain.policy import Actor, Operation

__all__ = ["MAX_LOOKED_UP", "AuditPeople"]

MAX_LOOKED_UP = 200
"""The most distinct ids one call looks up (a console page shows 50 rows: at most 100)."""


@attrs.frozen
class AuditPeople:
    """``AuditPeople(storage)(actor, ids)`` → ``{user id: email}`` for those of ``ids`` (None
    and repeats ignored; the first ``MAX_LOOKED_UP`` distinct ones, in sorted order) that name
    a user in ``actor``'s scope, read in one read-only unit of work."""

    _storage: Storage

    async def __call__(self, actor: Actor, ids: Iterable[str | None]) -> dict[str, str]:
        """The emails of the users ``ids`` names that ``actor`` may see."""
        policy.require(actor, Operation.LIST_AUDIT_EVENTS)
        wanted = sorted({i for i in ids if i})[:MAX_LOOKED_UP]
        emails: dict[str, str] = {}
        async with self._storage.read() as uow:
            for user_id in wanted:
                user = await uow.users.get(user_id)
                if user is not None and policy.in_scope(actor, user.org_id):
                    emails[user_id] = user.email
        return emails
