"""Many instances, one service (docs/reference/operations.md; ADR 0015): what keeps an instance in
step with its peers.

- ``follow_peers``: subscribes this instance to what its peers announce over a broker bus —
  ``ConfigChanged`` from a peer re-reads this instance's configuration (all or nothing,
  ``ConfigReloader.follow``), ``SigningKeysChanged`` from a peer re-reads the key store at once.
  Events published here (``origin`` None) are left alone: this instance has already acted.
- ``maintain_keys``: the background task of a serving instance. Every ``auth.key_poll_interval``
  seconds it re-reads the key store (the fallback when an announcement was missed: a lost
  message only delays) and, when ``auth.key_rotation_interval`` is set, rotates on schedule —
  the store decides under its lock whether the newest key is old enough, so of many instances
  one rotates; it announces the new key with ``SigningKeysChanged``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from application.events.catalog import ConfigChanged, SigningKeysChanged
from application.ports import EventBus
from application.shared.settings import AuthSettings, Live

log = logging.getLogger("authsvc.keys")


class KeyMaintainer(Protocol):
    """What the key tasks need of the signer (``JwtSigner``)."""

    async def refresh_keys(self) -> bool:
        """Re-read the key store; True if the key set changed."""
        ...

    async def rotate_keys(
        self, *, now: bool = False, due_after: int | None = None, alg: str | None = None
    ) -> Any:
        """Rotate ``alg``'s key (default: ``auth.algorithm``; when due); the new key's record
        or None."""
        ...


class Follower(Protocol):
    """What ``follow_peers`` needs of the config reloader (``ConfigReloader``)."""

    async def follow(self, event: ConfigChanged) -> None:
        """Re-read and apply this instance's configuration after a peer's refresh."""
        ...


def follow_peers(bus: EventBus, reloader: Follower, signer: KeyMaintainer) -> None:
    """Subscribe this instance to its peers' ``ConfigChanged`` and ``SigningKeysChanged``."""

    async def on_config(event: ConfigChanged) -> None:
        if event.origin is not None:
            await reloader.follow(event)

    async def on_keys(event: SigningKeysChanged) -> None:
        if event.origin is not None:
            changed = await signer.refresh_keys()
            log.info(
                "keys %s (%s) announced by instance %s; key set changed here: %s",
                ", ".join(event.kids),
                event.reason,
                event.origin,
                changed,
            )

    bus.subscribe(ConfigChanged, on_config)
    bus.subscribe(SigningKeysChanged, on_keys)


async def keys_round(signer: KeyMaintainer, settings: AuthSettings, bus: EventBus) -> None:
    """One round of ``maintain_keys``: re-read the store, then rotate each of
    ``auth.algorithms`` if due (and announce)."""
    await signer.refresh_keys()
    interval = settings.key_rotation_interval
    if not interval:
        return
    for alg in settings.signing_algorithms:
        record = await signer.rotate_keys(due_after=interval, alg=alg)
        if record is not None:
            log.info(
                "scheduled rotation: %s key %s signs from %s", alg, record.kid, record.activates_at
            )
            await bus.publish(SigningKeysChanged(kids=(record.kid,), reason="rotated"))


async def maintain_keys(
    signer: KeyMaintainer,
    settings: Live[AuthSettings],
    bus: EventBus,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> None:
    """Run ``keys_round`` every ``auth.key_poll_interval`` seconds (read afresh each round; at
    most the rotation interval) until cancelled. A failure (the database is away) is logged
    and the next round tries again."""
    while True:
        current = settings.current
        pause = current.key_poll_interval
        if current.key_rotation_interval:
            pause = min(pause, current.key_rotation_interval)
        await sleep(pause)
        try:
            await keys_round(signer, settings.current, bus)
        except Exception as exc:
            log.warning("signing-key upkeep failed: %s: %s", type(exc).__name__, exc)


__all__ = ["follow_peers", "keys_round", "maintain_keys"]
