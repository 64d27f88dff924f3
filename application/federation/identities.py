"""A user's identities at other providers (docs/reference/federation.md): list them, unlink one
(``GET /me/identities``, ``DELETE /me/identities/{provider}``, the account page)."""

from __future__ import annotations

import attrs

from application.events.audit import record
from application.events.federation import IdentityUnlinked
from application.ports import Clock, EventBus, Storage
from domain.errors import NotFound
from domain.federation import FederatedIdentity
from domain.login import check_unlink_leaves_a_login

__all__ = ["OwnIdentities"]


@attrs.frozen
class OwnIdentities:
    """``await identities.list(user_id)`` → the user's identities, oldest link first;
    ``await identities.unlink(user_id, provider)`` removes one (``identity.unlinked``)."""

    _storage: Storage
    _bus: EventBus
    _clock: Clock

    async def list(self, user_id: str) -> list[FederatedIdentity]:
        async with self._storage.read() as uow:
            return await uow.identities.list_for_user(user_id)

    async def unlink(self, user_id: str, provider: str) -> None:
        """Remove the user's identity of ``provider``. Raises ``NotFound`` (404: none) or
        ``LastLoginMethod`` (409: no password, passkey or other identity would be left); on
        either nothing changed."""
        async with self._storage.begin() as uow:
            user = await uow.users.get(user_id)
            mine = await uow.identities.list_for_user(user_id)
            if user is None or not any(i.provider == provider for i in mine):
                raise NotFound("no identity of this provider is linked")
            check_unlink_leaves_a_login(user, len(mine) - 1)
            await uow.identities.delete(user_id, provider)
            event = IdentityUnlinked(user_id, provider)
            await record(uow, [event], self._clock.now())
            await uow.commit()
        await self._bus.publish(event)
