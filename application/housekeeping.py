"""Housekeeping (contract section 12): purge what no rule needs any more."""

from __future__ import annotations

import attrs

from application.ports import Clock, Storage


@attrs.frozen
class PurgeExpired:
    """Delete refresh tokens whose ``expires_at`` has passed, and the records of rotated tokens
    whose original expiry has passed (they are kept until then for reuse detection, RFC 9700
    §4.14.2). A live token is never touched: only rows with ``expires_at <= now`` go. Then the
    records of sessions that ended by time: past their absolute end, or left without a live token;
    and expired reset and verification tokens (contract section 9).

    Called every ``storage.purge_interval`` seconds by the server and by ``authsvc purge``.
    Returns how many rows were deleted. Raises what the storage raises.
    """

    storage: Storage
    clock: Clock

    async def __call__(self) -> int:
        async with self.storage.begin() as uow:
            now = self.clock.now()
            deleted = await uow.tokens.purge_expired(now)
            deleted += await uow.sessions.purge_expired(now)
            deleted += await uow.email_tokens.purge_expired(now)
            await uow.commit()
        return deleted
