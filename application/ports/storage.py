"""Ports of the storage backend: the unit of work, the storage, the login-attempt counters.
See ``application.ports`` for the conventions every port follows."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Protocol

import attrs

from application.ports.accounts import EmailTokenStore, SessionStore, TokenStore, UserRepo
from application.ports.device import DeviceGrantStore
from application.ports.federation import FederatedIdentityRepo
from application.ports.invitations import InvitationRepo
from application.ports.oidc import AuthorizationCodeStore, ConsentStore, HostedSessionStore
from application.ports.outbox import OutboxStore
from application.ports.pushed import PushedRequestStore
from application.ports.records import AuditLog, ClientRepo, GroupRepo, MfaStore, PasskeyRepo
from application.ports.scim import ScimRecordStore
from application.ports.webhooks import WebhookRepo


class UnitOfWork(Protocol):
    """One unit of work: the repositories below share one database transaction.

    Made by ``Storage.begin()``: ``async with storage.begin() as uow: ...; await uow.commit()``.
    ``commit()`` makes the changes so far durable and the unit goes on; leaving the context
    without ``commit()`` (by an exception, by cancellation) rolls back what was not committed.
    """

    users: UserRepo
    tokens: TokenStore
    sessions: SessionStore
    groups: GroupRepo
    email_tokens: EmailTokenStore
    mfa: MfaStore
    audit: AuditLog
    clients: ClientRepo
    passkeys: PasskeyRepo
    codes: AuthorizationCodeStore
    consents: ConsentStore
    hosted_sessions: HostedSessionStore
    identities: FederatedIdentityRepo
    invitations: InvitationRepo
    device_grants: DeviceGrantStore
    pushed_requests: PushedRequestStore
    outbox: OutboxStore
    webhooks: WebhookRepo
    scim: ScimRecordStore

    async def commit(self) -> None:
        """Make every change of this unit durable at once."""
        ...


class Storage(Protocol):
    """A storage backend (memory, SQLite, PostgreSQL) with a lifetime (``open`` ... ``close``);
    ``begin()`` starts each unit of work."""

    def begin(self) -> AbstractAsyncContextManager[UnitOfWork]:
        """Start a unit of work, one transaction (serialized with other writers as the backend
        requires). Raises ``RuntimeError`` if the backend needs ``open()`` and is not open."""
        ...

    def read(self) -> AbstractAsyncContextManager[UnitOfWork]:
        """Start a read-only unit of work: no transaction and no write lock, each statement
        sees what was committed when it ran (so a read needing one snapshot is one statement,
        e.g. ``UserRepo.get_with_groups``). Nothing is written through it and it needs no
        ``commit()``. Raises ``RuntimeError`` if the backend needs ``open()`` and is not open."""
        ...

    async def open(self) -> None:
        """Connect (pool, file) and apply pending migrations; does nothing if already open.

        Raises ``StorageUnavailable`` (an adapter error, not a domain one: its message names the
        setting, the location with any password hidden, and the reason) if the store cannot be
        reached or used.
        """
        ...

    async def close(self) -> None:
        """Release connections."""
        ...

    async def ping(self) -> None:
        """Check the database for readiness (docs/reference/operations.md): a trivial query,
        answered within about a second. Raises on failure — the driver's error untranslated (the
        health indicator reports its class and message), or ``StorageFault`` while the backend knows
        it cannot write (e.g. SQLite after a full disk, until a probe write commits);
        ``RuntimeError`` if not open."""
        ...


@attrs.frozen
class AttemptClaim:
    """The answer of ``LoginAttempts.claim``.

    ``attempt_id``: the id of the row recorded for this attempt (pass it to ``release``), or None
    when the attempt was refused (``limit`` or more were already counted in the window).
    ``counted``: the times counted for the key at or after ``since``, oldest first — this
    attempt's included when it was admitted.
    """

    attempt_id: int | None
    counted: tuple[datetime, ...]

    @property
    def admitted(self) -> bool:
        """True when a row was recorded for this attempt."""
        return self.attempt_id is not None


class LoginAttempts(Protocol):
    """Failed-login records for throttling, keyed by an opaque string (the throttle passes a
    SHA-256 hex digest of email and client address). Each call stands alone, outside any unit of
    work.

    ``claim`` is the atomic "count first, then decide" of docs/reference/mfa-and-passkeys.md: an
    attempt is recorded (as a failure, until the caller ``release``s it or ``reset``s the key)
    before the secret is checked, so of any number of concurrent claims, in any process or instance
    sharing the store, at most ``limit`` are admitted per window.
    """

    async def claim(self, key: str, at: datetime, since: datetime, limit: int) -> AttemptClaim:
        """In one atomic step: count the records of ``key`` at or after ``since``; if fewer
        than ``limit``, record one more at ``at`` and return its id; else record nothing.
        Concurrent claims on one key are serialized (one write transaction on SQLite, a
        per-key transaction-scoped advisory lock on PostgreSQL, no await in between in
        memory). Records older than the adapter's ``max_age`` may be forgotten. Raises
        ``ValueError`` if a time is naive."""
        ...

    async def release(self, key: str, attempt_id: int) -> None:
        """Forget the one record ``attempt_id`` of ``key`` (the attempt it counted was not a
        failure after all); nothing if it is gone (a ``reset`` took it)."""
        ...

    async def reset(self, key: str) -> None:
        """Forget every failure of ``key`` (after a successful login)."""
        ...
