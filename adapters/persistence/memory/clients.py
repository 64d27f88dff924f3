"""The in-memory OAuth client registry and revocation list (docs/reference/oauth-and-oidc.md)."""

from __future__ import annotations

from datetime import datetime

from adapters.persistence.memory.unit import MemoryUnit
from adapters.persistence.times import require_aware
from application.ports import ClientRepo
from domain.clients import Client
from domain.errors import Conflict, NotFound


class MemoryClientRepo(ClientRepo):
    """``ClientRepo`` over the working copy (clients keyed by id, revocations by ``jti``)."""

    def __init__(self, stage: MemoryUnit) -> None:
        self._s = stage

    async def add(self, client: Client) -> None:
        """Insert; ``Conflict`` if the id exists."""
        require_aware(client.created_at)
        if client.id in self._s.view.clients:
            raise Conflict("client id exists")
        self._s.write("clients")[client.id] = client

    async def get(self, client_id: str) -> Client | None:
        """The client, or None."""
        return self._s.view.clients.get(client_id)

    async def update(self, client: Client) -> None:
        """Replace the stored client; ``NotFound`` if there is none."""
        if client.id not in self._s.view.clients:
            raise NotFound("no such client")
        self._s.write("clients")[client.id] = client

    async def delete(self, client_id: str) -> bool:
        """Delete with its consents, codes, device grants and sessions (with their live tokens
        and hosted sessions); False if it did not exist."""
        view = self._s.view
        if client_id not in view.clients:
            return False
        del self._s.write("clients")[client_id]
        sessions = {sid for sid, row in view.sessions.items() if row.client_id == client_id}
        for name, gone in (
            ("consents", [k for k, c in view.consents.items() if c.client_id == client_id]),
            ("codes", [k for k, c in view.codes.items() if c.client_id == client_id]),
            (
                "device_grants",
                [k for k, g in view.device_grants.items() if g.client_id == client_id],
            ),
            (
                "pushed_requests",
                [k for k, p in view.pushed_requests.items() if p.client_id == client_id],
            ),
            ("sessions", list(sessions)),
            ("tokens", [k for k, t in view.tokens.items() if t.family_id in sessions]),
            ("hosted", [k for k, h in view.hosted.items() if h.session_id in sessions]),
        ):
            if gone:
                table = self._s.write(name)
                for key in gone:
                    del table[key]
        return True

    async def list_page(self, org_id: str | None, after: str | None, limit: int) -> list[Client]:
        """Clients with ``id > after`` of ``org_id`` (None: all), ordered by id."""
        rows = sorted(
            (
                c
                for c in self._s.view.clients.values()
                if (org_id is None or c.org_id == org_id) and (after is None or c.id > after)
            ),
            key=lambda c: c.id,
        )
        return rows[:limit]

    async def revoke(self, jti: str, client_id: str, expires_at: datetime) -> None:
        """Record the revocation of ``jti`` until ``expires_at``; idempotent."""
        require_aware(expires_at)
        if jti not in self._s.view.revoked:
            self._s.write("revoked")[jti] = (client_id, expires_at)

    async def is_revoked(self, jti: str) -> bool:
        """True if ``jti`` is recorded as revoked."""
        return jti in self._s.view.revoked

    async def purge_revoked(self, now: datetime, limit: int | None = None) -> int:
        """Forget revocations of tokens expired by ``now`` and proof ids past their window (up
        to ``limit`` of each)."""
        require_aware(now)
        gone = self._s.purge("revoked", lambda row: row[1] <= now, limit)
        return gone + self._s.purge("dpop_proofs", lambda exp: exp <= now, limit)

    async def claim_proof_jti(self, jti: str, expires_at: datetime) -> bool:
        """Remember ``jti``; False if it is already remembered (a replay)."""
        require_aware(expires_at)
        if jti in self._s.view.dpop_proofs:
            return False
        self._s.write("dpop_proofs")[jti] = expires_at
        return True
