"""What proving the email does to the identities of other providers
(``docs/reference/federation.md``): an account created or linked through a provider while its email
was unverified may have been pre-hijacked (Sudhodanan & Paverd 2022), so the owner's first proof of
the email — a verification link or a password reset (``docs/reference/accounts.md``) — removes those
identities."""

from __future__ import annotations

from datetime import datetime

from application.events.catalog import Event, SessionEnded
from application.events.federation import IdentityUnlinked
from application.ports import UnitOfWork
from application.shared.backchannel import queue_logout_notices
from domain.model import SessionEndReason

__all__ = ["EMAIL_PROVEN", "drop_unproven_identities"]

EMAIL_PROVEN = "email_proven"
"""``identity.unlinked``'s ``details.reason`` when the owner proved the email."""


async def drop_unproven_identities(
    uow: UnitOfWork, user_id: str, sessions_ended: bool, now: datetime
) -> list[Event]:
    """The owner of ``user_id`` has just proved its email (a verification link or a password
    reset): remove, in ``uow``, the identities linked while the email was unverified — a
    pre-hijacked account's attacker's (Sudhodanan & Paverd 2022; ``docs/adr/0034-federated-
    login.md``) — and, when there were any, end every session of the user (sessions do not
    record which sign-in method opened them, so every session they may have started ends, and
    every pending ``mfa_token`` is voided; ``sessions_ended``: the caller does both itself, as
    a reset does; the back-channel logout notices of the sessions ended are queued as of
    ``now``, ``application.shared.backchannel``). Returns the events to
    record and publish: an ``IdentityUnlinked`` (``reason`` ``email_proven``) per identity and
    a ``SessionEnded`` (``email_proven``) per session. Raises what the storage raises."""
    removed = await uow.identities.remove_unproven(user_id)
    events: list[Event] = [IdentityUnlinked(user_id, i.provider, EMAIL_PROVEN) for i in removed]
    if removed and not sessions_ended:
        await uow.mfa.void_challenges(user_id)  # a second step the identities began
        await queue_logout_notices(uow, user_id, now)
        ended = await uow.sessions.end_all(user_id)
        reason = SessionEndReason.EMAIL_PROVEN
        events += [SessionEnded(user_id, s, reason, user_id) for s in ended]
    return events
