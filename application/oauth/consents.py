"""The consents a user gave OpenID Connect clients, seen and revoked by the user (
docs/reference/oauth-and-oidc.md: ``GET /me/consents``, ``DELETE /me/consents/{client_id}``).

A consent (``domain.oidc.Consent``) is granted on the provider's consent page; the caller's own
consents need no role. Revoking one ends, in the same unit of work, every session of the user
that client started (``SessionStore.end_for_client``: their refresh tokens and hosted sessions
go too), records ``oauth.consent_revoked`` and a ``session.ended`` per session (
docs/reference/operations.md), and publishes the events after the commit.
"""

from __future__ import annotations

import attrs

from application.events.audit import record
from application.events.catalog import Event, SessionEnded
from application.events.oidc import ConsentRevoked
from application.ports import Clock, EventBus, Storage
from application.shared.backchannel import queue_logout_notices
from application.shared.clients import client_names
from application.shared.steps import publish_all
from domain.errors import NotFound
from domain.model import SessionEndReason
from domain.oidc import Consent
from domain.policy import Principal

__all__ = ["ListConsents", "ListedConsent", "RevokeConsent"]


@attrs.frozen
class ListedConsent:
    """A consent as ``GET /me/consents`` shows it: the record and its client's ``name`` (None
    only if the client was deleted while the list was read)."""

    consent: Consent
    client_name: str | None


@attrs.frozen
class ListConsents:
    """GET /me/consents: the caller's consents, newest grant first
    (``ConsentStore.list_for_user``), each with its client's name."""

    _storage: Storage

    async def __call__(self, principal: Principal) -> list[ListedConsent]:
        """The consents of the caller."""
        async with self._storage.read() as uow:
            consents = await uow.consents.list_for_user(principal.user_id)
            names = await client_names(uow, (c.client_id for c in consents))
        return [ListedConsent(c, names.get(c.client_id)) for c in consents]


@attrs.frozen
class RevokeConsent:
    """DELETE /me/consents/{client_id}: revoke the caller's consent to ``client_id`` and end the
    sessions that client started for the caller (their refresh tokens stop working at once; a
    later authorization asks for consent again). Raises ``NotFound`` when the caller has no
    consent for that client (an unknown client included)."""

    _storage: Storage
    _bus: EventBus
    _clock: Clock

    async def __call__(self, principal: Principal, client_id: str) -> list[str]:
        """Revoke; the ids of the sessions ended, sorted."""
        me = principal.user_id
        async with self._storage.begin() as uow:
            if not await uow.consents.revoke(me, client_id):
                raise NotFound("consent not found")
            now = self._clock.now()
            await queue_logout_notices(uow, me, now, started_by=client_id)
            ended = await uow.sessions.end_for_client(me, client_id)
            events: list[Event] = [ConsentRevoked(me, client_id, len(ended))]
            events += [SessionEnded(me, s, SessionEndReason.USER, me) for s in ended]
            await record(uow, events, now)
            await uow.commit()
        await publish_all(self._bus, events)
        return ended
