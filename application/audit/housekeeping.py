"""Housekeeping (docs/reference/operations.md): purge what no rule needs any more."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

import attrs

from application.ports import Clock, Storage, UnitOfWork
from application.shared.settings import AuditSettings, Live

PURGE_BATCH = 5000
"""Rows one purge statement deletes at most: each batch is its own transaction, so a backlog of
millions commits as it goes and never holds locks (or PostgreSQL's vacuum) back for long."""

_Purge = Callable[[UnitOfWork, datetime, int], Awaitable[int]]


@attrs.frozen
class PurgeExpired:
    """Delete refresh tokens whose ``expires_at`` has passed, and the records of rotated tokens
    whose original expiry has passed (they are kept until then for reuse detection, RFC 9700
    §4.14.2). A live token is never touched: only rows with ``expires_at <= now`` go. Then
    the provider's hosted sessions (section 15) past their idle or absolute end; the records
    of sessions that ended by time: past their absolute end, or left without a live token or
    live hosted session; authorization codes past their ``expires_at`` (used or not); device
    grants past their ``expires_at`` (RFC 8628, any status); pushed authorization requests past
    theirs (RFC 9126);
    expired reset and verification tokens (docs/reference/accounts.md); and expired second steps of
    logins, ``mfa_token``s (section 10); revocations of client tokens that have expired
    (section 14); expired WebAuthn ceremonies (section 13); started federated logins
    (``federation_flows``) past their ``expires_at`` (section 16); audit events older than
    ``audit.retention_days`` days (section 11; with ``audit`` settings given).

    Called every ``storage.purge_interval`` seconds by the server and by ``authsvc purge``.
    Each kind is deleted in batches of at most ``batch`` rows per table (``PURGE_BATCH``), each
    batch in its own transaction, until a batch comes back short: what was deleted stays deleted
    if a later batch fails. Returns how many rows were deleted. Raises what the storage raises.
    """

    storage: Storage
    clock: Clock
    audit: Live[AuditSettings] | None = None
    delivery_retention: Callable[[], int] | None = None
    batch: int = PURGE_BATCH

    async def __call__(self) -> int:
        now = self.clock.now()
        purges: list[_Purge] = [
            lambda uow, at, n: uow.tokens.purge_expired(at, n),
            lambda uow, at, n: uow.hosted_sessions.purge_expired(at, n),
            lambda uow, at, n: uow.sessions.purge_expired(at, n),
            lambda uow, at, n: uow.codes.purge_expired(at, n),
            lambda uow, at, n: uow.device_grants.purge_expired(at, n),
            lambda uow, at, n: uow.pushed_requests.purge_expired(at, n),
            lambda uow, at, n: uow.email_tokens.purge_expired(at, n),
            lambda uow, at, n: uow.mfa.purge_expired(at, n),
            lambda uow, at, n: uow.clients.purge_revoked(at, n),
            lambda uow, at, n: uow.passkeys.purge_expired(at, n),
            lambda uow, at, n: uow.identities.purge_expired(at, n),
        ]
        if self.audit is not None:
            retention = timedelta(days=self.audit.current.retention_days)
            purges.append(lambda uow, at, n: uow.audit.purge_before(at - retention, n))
        if self.delivery_retention is not None:
            kept = timedelta(seconds=self.delivery_retention())
            purges.append(lambda uow, at, n: uow.webhooks.purge_deliveries_before(at - kept, n))
        deleted = 0
        for purge in purges:
            deleted += await self._in_batches(purge, now)
        return deleted

    async def _in_batches(self, purge: _Purge, now: datetime) -> int:
        """Run ``purge`` one committed batch at a time until a batch deletes fewer than
        ``batch`` rows (every table it covers is then drained up to ``now``)."""
        total = 0
        while True:
            async with self.storage.begin() as uow:
                deleted = await purge(uow, now, self.batch)
                await uow.commit()
            total += deleted
            if deleted < self.batch:
                return total
