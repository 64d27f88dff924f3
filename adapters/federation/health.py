"""Component ``federation`` of readiness (docs/reference/federation.md): whether each enabled
identity provider answered its discovery, without ever making readiness DOWN.

A provider unreachable at start is not fatal (a login loads discovery on first use); it is
logged and listed here. The probes run in the background — at start (``probe_soon``) and again
when a readiness check finds the last round older than ``RECHECK`` seconds — so a readiness
probe never waits on a provider longer than ``WAIT`` seconds (below the actuator's
``indicator_timeout``, default 2 s): a slow provider shows ``"checking"`` meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from application.federation.settings import FederationSettings
from application.ports import FederationFailed, ProviderProbe, ProviderProbes, UpstreamClient
from application.shared.settings import Live
from domain.federation import UpstreamProvider

__all__ = ["RECHECK", "WAIT", "FederationHealth"]

log = logging.getLogger("authsvc.federation")

RECHECK = 60.0
"""Seconds after which a readiness check starts another round of probes."""
WAIT = 1.0
"""Seconds a readiness check waits for a round under way."""
_ERROR_LIMIT = 300


@attrs.frozen
class _Seen:
    """One provider's last probe: reachable or the error (``reason: detail``, no secret)."""

    issuer: str
    reachable: bool
    error: str = ""


class FederationHealth(ProviderProbes):
    """Component ``federation``, a readiness indicator that is always UP, and the
    ``ProviderProbes`` port the admin console reads (``probes``).

    ``check()`` (async, never raises) returns ``{"providers": {id: {"state": "reachable" |
    "unreachable" | "checking", "issuer", "error"?}}}`` over the enabled providers in force
    (a refresh changes them; GitHub is always reachable: nothing to discover), plus
    ``"unreachable": [ids]`` when any is."""

    name = "federation"

    def __init__(
        self,
        client: UpstreamClient,
        settings: Live[FederationSettings],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._settings = settings
        self._clock = clock
        self._seen: dict[str, _Seen] = {}
        self._round: asyncio.Task[None] | None = None
        self._round_at: float | None = None

    async def probe(self) -> None:
        """One round: each enabled provider's discovery (``UpstreamClient.check``); an
        unreachable one is logged (a warning when it turns so, info when it is back)."""
        providers = self._settings.current.enabled()
        results = await asyncio.gather(*(self._probe_one(p.upstream()) for p in providers))
        for provider, seen in zip(providers, results, strict=True):
            before = self._seen.get(provider.id)
            if not seen.reachable and (before is None or before.reachable):
                log.warning("federation %s: provider unreachable: %s", provider.id, seen.error)
            elif seen.reachable and before is not None and not before.reachable:
                log.info("federation %s: provider reachable again", provider.id)
            self._seen[provider.id] = seen

    async def _probe_one(self, upstream: UpstreamProvider) -> _Seen:
        try:
            await self._client.check(upstream)
        except FederationFailed as exc:
            return _Seen(upstream.issuer, False, str(exc)[:_ERROR_LIMIT])
        except Exception as exc:  # an indicator never raises: any failure is "unreachable"
            return _Seen(upstream.issuer, False, f"{type(exc).__name__}: {exc}"[:_ERROR_LIMIT])
        return _Seen(upstream.issuer, True)

    def probe_soon(self) -> asyncio.Task[None]:
        """Start a round in the background unless one is under way; returns it."""
        if self._round is None or self._round.done():
            self._round_at = self._clock()
            self._round = asyncio.create_task(self.probe())
        return self._round

    async def close(self) -> None:
        """Cancel a round under way (the app is stopping)."""
        if self._round is not None and not self._round.done():
            self._round.cancel()
            await asyncio.gather(self._round, return_exceptions=True)

    async def probes(self) -> Mapping[str, ProviderProbe]:
        """The enabled providers' last probes by id (``ProviderProbes``); starts a round when
        the last is older than ``RECHECK`` s and waits at most ``WAIT`` s for one under way."""
        if self._round_at is None or self._clock() - self._round_at >= RECHECK:
            self.probe_soon()
        if self._round is not None and not self._round.done():
            await asyncio.wait({self._round}, timeout=WAIT)
        found: dict[str, ProviderProbe] = {}
        for provider in self._settings.current.enabled():
            seen = self._seen.get(provider.id)
            if seen is None or seen.issuer != provider.upstream().issuer:
                found[provider.id] = ProviderProbe("checking")
            elif seen.reachable:
                found[provider.id] = ProviderProbe("reachable")
            else:
                found[provider.id] = ProviderProbe("unreachable", seen.error)
        return found

    async def check(self) -> dict[str, Any]:
        """The providers' states (see the class), from ``probes``."""
        probes = await self.probes()
        providers: dict[str, Any] = {}
        for provider in self._settings.current.enabled():
            probe = probes.get(provider.id, ProviderProbe("checking"))
            entry: dict[str, Any] = {"state": probe.state, "issuer": provider.upstream().issuer}
            if probe.state == "unreachable":
                entry["error"] = probe.error
            providers[provider.id] = entry
        details: dict[str, Any] = {"providers": providers}
        unreachable = [p for p, v in providers.items() if v["state"] == "unreachable"]
        if unreachable:
            details["unreachable"] = unreachable
        return details
