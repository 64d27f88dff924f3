"""The readiness component ``federation`` (docs/reference/federation.md;
``adapters.federation.health``): always UP; an unreachable provider is listed, probed again
after ``RECHECK`` seconds, and listed reachable once it answers; a provider that hangs never
holds a readiness check longer than ``WAIT``."""

from __future__ import annotations

import asyncio

import pytest

from adapters.federation import health as module
from adapters.federation.health import FederationHealth
from application.federation.settings import FederationSettings, ProviderSettings
from application.ports import FederationFailed
from application.shared.settings import Live
from domain.federation import UpstreamProvider


class FakeClient:
    """``check`` raises while ``down`` holds the issuer; hangs for issuers in ``hang``."""

    def __init__(self) -> None:
        self.down: set[str] = set()
        self.hang: set[str] = set()
        self.calls = 0

    async def check(self, provider: UpstreamProvider) -> None:
        self.calls += 1
        if provider.issuer in self.hang:
            await asyncio.sleep(3600)
        if provider.issuer in self.down:
            raise FederationFailed("discovery_failed", "ClientConnectorError")


def _settings(*issuers: str) -> Live[FederationSettings]:
    providers = tuple(ProviderSettings(id=f"p{n}", name=f"P{n}", client_id="c", issuer=issuer)
                      for n, issuer in enumerate(issuers))  # fmt: skip
    return Live(FederationSettings(providers=providers))


async def test_unreachable_then_back_and_always_up() -> None:
    client, now = FakeClient(), [0.0]
    client.down.add("https://a.example")
    indicator = FederationHealth(client, _settings("https://a.example", "https://b.example"),
                                 clock=lambda: now[0])  # type: ignore[arg-type]  # fmt: skip
    await indicator.probe_soon()
    details = await indicator.check()
    assert details["unreachable"] == ["p0"]
    assert details["providers"]["p0"]["state"] == "unreachable"
    assert details["providers"]["p1"] == {"state": "reachable", "issuer": "https://b.example"}
    assert "status" not in details  # UP
    calls = client.calls
    client.down.clear()
    await indicator.check()  # within RECHECK: no new probe
    assert client.calls == calls
    now[0] = module.RECHECK
    details = await indicator.check()  # a new round, awaited up to WAIT
    assert client.calls == calls + 2
    assert "unreachable" not in details
    assert details["providers"]["p0"]["state"] == "reachable"
    await indicator.close()


async def test_a_hanging_provider_is_checking_within_the_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = FakeClient()
    client.hang.add("https://slow.example")
    monkeypatch.setattr(module, "WAIT", 0.05)
    indicator = FederationHealth(client, _settings("https://slow.example"))  # type: ignore[arg-type]
    details = await asyncio.wait_for(indicator.check(), timeout=1)
    assert details == {"providers": {"p0": {"state": "checking",
                                            "issuer": "https://slow.example"}}}  # fmt: skip
    await indicator.close()
