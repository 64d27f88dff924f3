"""Back-channel logout notices (OpenID Connect Back-Channel Logout 1.0 §2.5;
docs/reference/oauth-and-oidc.md): which relying parties hear that a session ends, written to
the durable outbox (docs/adr/0049-durable-outbox.md) in the unit of work that ends it.

Every path that ends sessions calls ``queue_logout_notices`` in its unit of work BEFORE the
store ends them (an ended session's record is gone, and with it the client it came from). A
session ``S`` that ends concerns:

- the client that started ``S`` (``Session.client_id``: a code exchange's token family), with
  the ``sid`` of its ID tokens (``Session.sid``, else ``S`` itself);
- every client whose token family came from ``S`` as its login (``Session.sid == S``: ``S`` is
  the hosted login session the ID tokens name), with ``sid`` = ``S``.

Each (client, ``sid``) pair gets one ``backchannel_logout`` item, only for a client with a
``backchannel_logout_uri``; the logout token itself is built and signed at delivery
(``application.oauth.backchannel``), so the outbox holds ids only.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from application.ports import UnitOfWork
from domain.model import Session
from domain.outbox import OutboxItem, OutboxKind, new_outbox_id

__all__ = ["logout_targets", "queue_logout_notices"]


def logout_targets(sessions: Collection[Session], ending: Collection[str]) -> list[tuple[str, str]]:
    """The ``(client_id, sid)`` pairs told when the sessions ``ending`` (ids) end, from the
    user's session records ``sessions`` (``SessionStore.of_user``), sorted, each once."""
    ends = set(ending)
    pairs: set[tuple[str, str]] = set()
    for s in sessions:
        if s.client_id is None:
            continue
        sid = s.sid or s.id
        if s.id in ends or sid in ends:
            pairs.add((s.client_id, sid))
    return sorted(pairs)


async def queue_logout_notices(
    uow: UnitOfWork,
    user_id: str,
    now: datetime,
    ending: Collection[str] | None = None,
    *,
    started_by: str | None = None,
) -> int:
    """Queue the back-channel logout notices of ``user_id``'s sessions ``ending`` (ids; None:
    every session of the user, or with ``started_by`` those that client started) in ``uow``,
    due at ``now``; call it before the store ends them, so the items commit with the ending or
    not at all. Returns how many were queued. Raises what the stores raise."""
    sessions = await uow.sessions.of_user(user_id)
    if ending is not None:
        ids: Collection[str] = ending
    else:
        ids = [s.id for s in sessions if started_by is None or s.client_id == started_by]
    queued = 0
    for client_id, sid in logout_targets(sessions, ids):
        client = await uow.clients.get(client_id)
        if client is None or client.backchannel_logout_uri is None:
            continue
        payload = {"client_id": client_id, "user_id": user_id, "sid": sid}
        await uow.outbox.add(
            OutboxItem(new_outbox_id(), OutboxKind.BACKCHANNEL_LOGOUT, payload, now, now)
        )
        queued += 1
    return queued
