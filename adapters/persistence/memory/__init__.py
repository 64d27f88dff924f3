"""In-memory storage: a real adapter (``storage.backend = "memory"``) and the tests' fake.

One ``asyncio.Lock`` serializes units of work, so a unit sees no other unit's changes while it
runs. Changes are staged on copy-on-write copies of the tables and published on ``commit()``
only; leaving ``begin()`` without committing (or by an exception) discards them (rollback).

Nothing here survives the process, and nothing is shared between processes: with several worker
processes use SQLite or PostgreSQL.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime, timedelta

from adapters.persistence.memory.audit import MemoryAuditLog
from adapters.persistence.memory.clients import MemoryClientRepo
from adapters.persistence.memory.device import MemoryDeviceGrantStore
from adapters.persistence.memory.email_tokens import MemoryEmailTokenStore
from adapters.persistence.memory.identities import MemoryFederatedIdentityRepo
from adapters.persistence.memory.invitations import MemoryInvitationRepo
from adapters.persistence.memory.mfa import MemoryMfaStore
from adapters.persistence.memory.oidc import (
    MemoryAuthorizationCodeStore,
    MemoryConsentStore,
    MemoryHostedSessionStore,
)
from adapters.persistence.memory.outbox import MemoryOutboxStore
from adapters.persistence.memory.passkeys import MemoryPasskeyRepo
from adapters.persistence.memory.pushed import MemoryPushedRequestStore
from adapters.persistence.memory.scim import MemoryScimRecordStore
from adapters.persistence.memory.tokens import MemorySessionStore, MemoryTokenStore
from adapters.persistence.memory.unit import MemoryUnit, Tables
from adapters.persistence.memory.users import MemoryGroupRepo, MemoryUserRepo
from adapters.persistence.memory.webhooks import MemoryWebhookRepo
from adapters.persistence.times import require_aware
from application.ports import AttemptClaim, LoginAttempts, Storage, UnitOfWork

__all__ = [
    "MemoryAuditLog",
    "MemoryAuthorizationCodeStore",
    "MemoryClientRepo",
    "MemoryConsentStore",
    "MemoryDeviceGrantStore",
    "MemoryEmailTokenStore",
    "MemoryGroupRepo",
    "MemoryHostedSessionStore",
    "MemoryInvitationRepo",
    "MemoryLoginAttempts",
    "MemoryMfaStore",
    "MemoryOutboxStore",
    "MemoryPasskeyRepo",
    "MemoryPushedRequestStore",
    "MemoryScimRecordStore",
    "MemorySessionStore",
    "MemoryStorage",
    "MemoryTokenStore",
    "MemoryUnitOfWork",
    "MemoryUserRepo",
]


class MemoryUnitOfWork(UnitOfWork):
    """One unit of work over the in-memory tables (``UnitOfWork`` port).

    ``commit()`` publishes the changes made so far; the unit then goes on from the new state, and
    later changes need another ``commit()``.
    """

    def __init__(self, stage: MemoryUnit) -> None:
        self._stage = stage
        self.users = MemoryUserRepo(stage)
        self.tokens = MemoryTokenStore(stage)
        self.sessions = MemorySessionStore(stage)
        self.groups = MemoryGroupRepo(stage)
        self.email_tokens = MemoryEmailTokenStore(stage)
        self.mfa = MemoryMfaStore(stage)
        self.audit = MemoryAuditLog(stage)
        self.clients = MemoryClientRepo(stage)
        self.passkeys = MemoryPasskeyRepo(stage)
        self.codes = MemoryAuthorizationCodeStore(stage)
        self.consents = MemoryConsentStore(stage)
        self.hosted_sessions = MemoryHostedSessionStore(stage)
        self.identities = MemoryFederatedIdentityRepo(stage)
        self.invitations = MemoryInvitationRepo(stage)
        self.device_grants = MemoryDeviceGrantStore(stage)
        self.pushed_requests = MemoryPushedRequestStore(stage)
        self.scim = MemoryScimRecordStore(stage)
        self.outbox = MemoryOutboxStore(stage)
        self.webhooks = MemoryWebhookRepo(stage)

    async def commit(self) -> None:
        """Publish every staged change at once."""
        self._stage.publish()


class MemoryStorage(Storage):
    """``Storage`` holding everything in process memory.

    ``begin()`` waits for the one lock, so units run one at a time (do not nest ``begin()`` in
    one task: it would wait for itself). ``open``/``close``/``ping`` do nothing; ``begin()`` works
    without ``open()``.
    """

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._tables = Tables()

    @asynccontextmanager
    async def _begin(self) -> AsyncIterator[MemoryUnitOfWork]:
        async with self._lock:
            # Rollback is simply dropping the stage: nothing reached the tables.
            yield MemoryUnitOfWork(MemoryUnit(self._tables))

    def begin(self) -> AbstractAsyncContextManager[MemoryUnitOfWork]:
        """Start a unit of work: ``async with storage.begin() as uow: ...; await uow.commit()``."""
        return self._begin()

    def read(self) -> AbstractAsyncContextManager[MemoryUnitOfWork]:
        """A read-only unit: a unit of work that is never committed."""
        return self._begin()

    async def open(self) -> None:
        """Nothing to connect."""

    async def close(self) -> None:
        """Nothing to release."""

    async def ping(self) -> None:
        """Always healthy."""


class MemoryLoginAttempts(LoginAttempts):
    """``LoginAttempts`` in process memory (per process: not shared between workers).

    ``max_age`` (s, default one day) bounds how long a failure is kept; it must exceed
    ``auth.login_failure_window``. Old failures are swept as new ones are recorded. Each key
    holds ``(id, time)`` records; ``claim`` counts and records with no ``await`` in between,
    so it is atomic on the event loop.
    """

    def __init__(self, max_age: float = 86_400.0) -> None:
        self._max_age = timedelta(seconds=max_age)
        self._failures: dict[str, list[tuple[int, datetime]]] = {}
        self._ids = itertools.count(1)
        self._records_since_sweep = 0

    async def claim(self, key: str, at: datetime, since: datetime, limit: int) -> AttemptClaim:
        """Count ``key``'s records since ``since``; below ``limit``, record one at ``at``."""
        require_aware(since)
        counted = sorted(t for _, t in self._failures.get(key, ()) if t >= since)
        if len(counted) >= limit:
            return AttemptClaim(None, tuple(counted))
        attempt_id = self._record(key, at)
        return AttemptClaim(attempt_id, tuple(sorted([*counted, at])))

    async def release(self, key: str, attempt_id: int) -> None:
        """Forget the record ``attempt_id`` of ``key``."""
        kept = [r for r in self._failures.get(key, ()) if r[0] != attempt_id]
        if kept:
            self._failures[key] = kept
        else:
            self._failures.pop(key, None)

    def _record(self, key: str, at: datetime) -> int:
        require_aware(at)
        attempt_id = next(self._ids)
        self._failures.setdefault(key, []).append((attempt_id, at))
        self._records_since_sweep += 1
        if self._records_since_sweep >= 1000:
            self._sweep(at - self._max_age)
        else:
            self._failures[key] = [r for r in self._failures[key] if r[1] >= at - self._max_age]
        return attempt_id

    async def reset(self, key: str) -> None:
        """Forget every failure of ``key``."""
        self._failures.pop(key, None)

    def _sweep(self, cutoff: datetime) -> None:
        self._records_since_sweep = 0
        for key in list(self._failures):
            kept = [r for r in self._failures[key] if r[1] >= cutoff]
            if kept:
                self._failures[key] = kept
            else:
                del self._failures[key]
