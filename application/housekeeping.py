"""Housekeeping (contract section 12): purge what no rule needs any more."""

from __future__ import annotations

from datetime import timedelta

import attrs

from application.ports import Clock, Storage
from application.settings import AuditSettings, Live


@attrs.frozen
class PurgeExpired:
    """Delete refresh tokens whose ``expires_at`` has passed, and the records of rotated tokens
    whose original expiry has passed (they are kept until then for reuse detection, RFC 9700
    §4.14.2). A live token is never touched: only rows with ``expires_at <= now`` go. Then the
    records of sessions that ended by time: past their absolute end, or left without a live token;
    expired reset and verification tokens (contract section 9); and expired second steps of
    logins, ``mfa_token``s (section 10); revocations of client tokens that have expired
    (section 14); expired WebAuthn ceremonies (section 13); audit events older than
    ``audit.retention_days`` days (section 11; with ``audit`` settings given).

    Called every ``storage.purge_interval`` seconds by the server and by ``authsvc purge``.
    Returns how many rows were deleted. Raises what the storage raises.
    """

    storage: Storage
    clock: Clock
    audit: Live[AuditSettings] | None = None

    async def __call__(self) -> int:
        async with self.storage.begin() as uow:
            now = self.clock.now()
            deleted = await uow.tokens.purge_expired(now)
            deleted += await uow.sessions.purge_expired(now)
            deleted += await uow.email_tokens.purge_expired(now)
            deleted += await uow.mfa.purge_expired(now)
            deleted += await uow.clients.purge_revoked(now)
            deleted += await uow.passkeys.purge_expired(now)
            if self.audit is not None:
                retention = timedelta(days=self.audit.current.retention_days)
                deleted += await uow.audit.purge_before(now - retention)
            await uow.commit()
        return deleted
