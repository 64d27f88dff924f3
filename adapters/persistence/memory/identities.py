"""The in-memory federated identity store (docs/reference/federation.md)."""

from __future__ import annotations

from datetime import datetime

import attrs

from adapters.persistence.memory.unit import MemoryUnit
from adapters.persistence.times import require_aware
from application.ports import FederatedIdentityRepo
from domain.errors import Conflict, NotFound
from domain.federation import FederatedIdentity, FederationFlow


class MemoryFederatedIdentityRepo(FederatedIdentityRepo):
    """``FederatedIdentityRepo`` over the working copy (keyed by (issuer, subject))."""

    def __init__(self, stage: MemoryUnit) -> None:
        self._s = stage

    async def add(self, identity: FederatedIdentity) -> None:
        """Insert; ``Conflict`` for a linked identity or provider, ``NotFound`` without the user."""
        require_aware(identity.linked_at)
        view = self._s.view
        if identity.user_id not in view.users:
            raise NotFound("user not found")
        key = (identity.issuer, identity.subject)
        if key in view.identities or any(
            i.user_id == identity.user_id and i.provider == identity.provider
            for i in view.identities.values()
        ):
            raise Conflict("identity already linked")
        self._s.write("identities")[key] = identity

    async def find(self, issuer: str, subject: str) -> FederatedIdentity | None:
        """The identity, or None."""
        return self._s.view.identities.get((issuer, subject))

    async def list_for_user(self, user_id: str) -> list[FederatedIdentity]:
        """The user's identities, oldest link first."""
        mine = [i for i in self._s.view.identities.values() if i.user_id == user_id]
        return sorted(mine, key=lambda i: (i.linked_at, i.provider))

    async def record_use(self, issuer: str, subject: str, email: str | None, at: datetime) -> None:
        """``last_used_at`` and the email now."""
        require_aware(at)
        stored = self._s.view.identities.get((issuer, subject))
        if stored is not None:
            used = attrs.evolve(stored, last_used_at=at, email=email)
            self._s.write("identities")[(issuer, subject)] = used

    async def delete(self, user_id: str, provider: str) -> FederatedIdentity | None:
        """Unlink; the removed identity or None."""
        for key, identity in self._s.view.identities.items():
            if identity.user_id == user_id and identity.provider == provider:
                del self._s.write("identities")[key]
                return identity
        return None

    async def remove_unproven(self, user_id: str) -> list[FederatedIdentity]:
        """Unlink the identities linked while the email was unverified; the removed ones."""
        gone = [(k, i) for k, i in self._s.view.identities.items()
                if i.user_id == user_id and not i.email_was_verified]  # fmt: skip
        for key, _ in gone:
            del self._s.write("identities")[key]
        return [i for _, i in gone]

    async def spend_nonce(
        self, issuer: str, nonce_hash: str, expires_at: datetime, now: datetime
    ) -> bool:
        """True the first time (until ``expires_at``), False for a live one."""
        require_aware(expires_at)
        live = self._s.view.nonces.get((issuer, nonce_hash))
        if live is not None and live > now:
            return False
        self._s.write("nonces")[(issuer, nonce_hash)] = expires_at
        return True

    async def put_flow(self, flow: FederationFlow) -> None:
        """Store; ``Conflict`` if the state hash exists, ``NotFound`` without the linking user."""
        require_aware(flow.expires_at)
        if flow.link_user_id is not None and flow.link_user_id not in self._s.view.users:
            raise NotFound("user not found")
        if flow.state_hash in self._s.view.flows:
            raise Conflict("state exists")
        self._s.write("flows")[flow.state_hash] = flow

    async def take_flow(self, state_hash: str, browser_hash: str) -> FederationFlow | None:
        """Remove and return it when bound to ``browser_hash``, or None."""
        flow = self._s.view.flows.get(state_hash)
        if flow is None or flow.browser_hash != browser_hash:
            return None
        return self._s.write("flows").pop(state_hash)  # type: ignore[no-any-return]

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete the started logins and nonces expired by ``now`` (up to ``limit`` each)."""
        flows = self._s.purge("flows", lambda f: f.expires_at <= now, limit)
        return flows + self._s.purge("nonces", lambda at: at <= now, limit)
