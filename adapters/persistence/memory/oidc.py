"""The in-memory OpenID Connect provider stores over a unit's working copy
(docs/reference/oauth-and-oidc.md): authorization codes, consents, hosted sessions."""

from __future__ import annotations

from datetime import datetime

import attrs

from adapters.persistence.memory.unit import MemoryUnit
from adapters.persistence.times import require_aware
from application.ports.oidc import (
    AuthorizationCodeStore,
    ConsentStore,
    HostedSessionStore,
    TakenCode,
)
from domain.errors import Conflict, NotFound
from domain.oidc import AuthorizationCode, Consent, HostedSession


class MemoryAuthorizationCodeStore(AuthorizationCodeStore):
    """``AuthorizationCodeStore`` over the working copy (codes keyed by hash). Units run one at
    a time, so ``take``'s check and mark are atomic."""

    def __init__(self, stage: MemoryUnit) -> None:
        self._s = stage

    async def add(self, code: AuthorizationCode) -> None:
        """Store a code. Raises ``Conflict`` (hash exists) or ``NotFound`` (no such user)."""
        for at in (code.auth_time, code.created_at, code.expires_at):
            require_aware(at)
        if code.user_id not in self._s.view.users:
            raise NotFound(f"user {code.user_id} not found")
        if code.code_hash in self._s.view.codes:
            raise Conflict("authorization code hash exists")
        self._s.write("codes")[code.code_hash] = code

    async def take(self, code_hash: str, now: datetime) -> TakenCode | None:
        """Mark the code used at ``now`` (first use); a used one unchanged; None if unknown."""
        require_aware(now)
        code = self._s.view.codes.get(code_hash)
        if code is None:
            return None
        if code.used_at is not None:
            return TakenCode(code, first_use=False)
        used = attrs.evolve(code, used_at=now)
        self._s.write("codes")[code_hash] = used
        return TakenCode(used, first_use=True)

    async def set_family(self, code_hash: str, family_id: str) -> None:
        """Record the family issued from the code."""
        code = self._s.view.codes.get(code_hash)
        if code is not None:
            self._s.write("codes")[code_hash] = attrs.evolve(code, family_id=family_id)

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) codes with ``expires_at <= now``."""
        require_aware(now)
        return self._s.purge("codes", lambda c: c.expires_at <= now, limit)


class MemoryConsentStore(ConsentStore):
    """``ConsentStore`` over the working copy (keyed by ``(user_id, client_id)``)."""

    def __init__(self, stage: MemoryUnit) -> None:
        self._s = stage

    async def get(self, user_id: str, client_id: str) -> Consent | None:
        """The consent, or None."""
        return self._s.view.consents.get((user_id, client_id))

    async def grant(self, consent: Consent) -> None:
        """Upsert with the union of the scopes. Raises ``NotFound`` (no such user or client)."""
        require_aware(consent.granted_at)
        if consent.user_id not in self._s.view.users:
            raise NotFound(f"user {consent.user_id} not found")
        if consent.client_id not in self._s.view.clients:
            raise NotFound(f"client {consent.client_id} not found")
        key = (consent.user_id, consent.client_id)
        old = self._s.view.consents.get(key)
        scopes = consent.scopes if old is None else (*old.scopes, *consent.scopes)
        self._s.write("consents")[key] = attrs.evolve(consent, scopes=tuple(dict.fromkeys(scopes)))

    async def list_for_user(self, user_id: str) -> list[Consent]:
        """The user's consents, newest grant first."""
        found = [c for (uid, _), c in self._s.view.consents.items() if uid == user_id]
        found.sort(key=lambda c: c.client_id)
        found.sort(key=lambda c: c.granted_at, reverse=True)
        return found

    async def revoke(self, user_id: str, client_id: str) -> bool:
        """Delete the consent; False if there was none."""
        if (user_id, client_id) not in self._s.view.consents:
            return False
        del self._s.write("consents")[(user_id, client_id)]
        return True


class MemoryHostedSessionStore(HostedSessionStore):
    """``HostedSessionStore`` over the working copy (keyed by the cookie's hash). A row whose
    ``sessions`` row is gone is dead (the session stores drop it with the row)."""

    def __init__(self, stage: MemoryUnit) -> None:
        self._s = stage

    async def add(self, hosted: HostedSession) -> None:
        """Store it. Raises ``Conflict`` (hash exists) or ``NotFound`` (no user or session)."""
        for at in (hosted.auth_time, hosted.idle_expires_at, hosted.expires_at):
            require_aware(at)
        if hosted.user_id not in self._s.view.users:
            raise NotFound(f"user {hosted.user_id} not found")
        if hosted.session_id not in self._s.view.sessions:
            raise NotFound(f"session {hosted.session_id} not found")
        if hosted.id_hash in self._s.view.hosted:
            raise Conflict("hosted session hash exists")
        self._s.write("hosted")[hosted.id_hash] = hosted

    async def find(self, id_hash: str, now: datetime) -> HostedSession | None:
        """The live hosted session, or None (expired, or its sessions row ended)."""
        require_aware(now)
        hosted = self._s.view.hosted.get(id_hash)
        if hosted is None or hosted.is_expired(now):
            return None
        session = self._s.view.sessions.get(hosted.session_id)
        return None if session is None or session.expires_at <= now else hosted

    async def touch(self, id_hash: str, idle_expires_at: datetime) -> None:
        """Move the idle end on (capped at the absolute end)."""
        require_aware(idle_expires_at)
        hosted = self._s.view.hosted.get(id_hash)
        if hosted is not None:
            idle = min(idle_expires_at, hosted.expires_at)
            self._s.write("hosted")[id_hash] = attrs.evolve(hosted, idle_expires_at=idle)

    async def reauthenticated(self, id_hash: str, auth_time: datetime) -> None:
        """Set its ``auth_time`` (a re-authentication)."""
        require_aware(auth_time)
        hosted = self._s.view.hosted.get(id_hash)
        if hosted is not None:
            self._s.write("hosted")[id_hash] = attrs.evolve(hosted, auth_time=auth_time)

    async def end(self, id_hash: str) -> str | None:
        """End it and its sessions row (with the row's live tokens); its session id or None."""
        hosted = self._s.view.hosted.get(id_hash)
        if hosted is None:
            return None
        del self._s.write("hosted")[id_hash]
        sid = hosted.session_id
        if sid in self._s.view.sessions:
            del self._s.write("sessions")[sid]
        gone = [h for h, t in self._s.view.tokens.items() if t.family_id == sid]
        if gone:
            tokens = self._s.write("tokens")
            for h in gone:
                del tokens[h]
        return sid

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete (up to ``limit``) hosted sessions past their idle or absolute end."""
        require_aware(now)
        return self._s.purge("hosted", lambda h: h.is_expired(now), limit)
