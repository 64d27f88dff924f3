"""The console's list of identity providers (``application.federation.providers``,
docs/reference/console.md): every configured provider in order with its probe, a disabled one
``disabled`` and never probed, no secret; viewer and operator refused."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from application.federation.providers import ListIdentityProviders
from application.federation.settings import FederationSettings, ProviderSettings
from application.ports import ProviderProbe, ProviderProbes
from application.shared.settings import Live
from domain.errors import Forbidden
from domain.model import Role
from domain.policy import Principal


class Probes(ProviderProbes):
    """Fixed probes; counts the calls."""

    def __init__(self, found: Mapping[str, ProviderProbe]) -> None:
        self.found, self.calls = found, 0

    async def probes(self) -> Mapping[str, ProviderProbe]:
        self.calls += 1
        return self.found


SETTINGS = FederationSettings(providers=(
    ProviderSettings(id="up", name="Up", client_id="c", issuer="https://up.example",
                     client_secret="up-secret", org_id="acme"),
    ProviderSettings(id="down", name="Down", client_id="c", issuer="https://down.example"),
    ProviderSettings(id="new", name="New", client_id="c", issuer="https://new.example"),
    ProviderSettings(id="off", name="Off", client_id="c", issuer="https://off.example",
                     enabled=False),
))  # fmt: skip
ADMIN = Principal("a", Role.ORG_ADMIN, "org-a")


async def test_each_provider_with_its_readiness() -> None:
    probes = Probes({"up": ProviderProbe("reachable"),
                     "down": ProviderProbe("unreachable", "discovery_failed: refused")})  # fmt: skip
    listed = await ListIdentityProviders(Live(SETTINGS), probes)(ADMIN)
    assert [(p.id, p.state, p.error) for p in listed] == [
        ("up", "reachable", ""), ("down", "unreachable", "discovery_failed: refused"),
        ("new", "checking", ""), ("off", "disabled", "")]  # fmt: skip
    assert listed[0].org_id == "acme" and listed[0].issuer == "https://up.example"
    assert "up-secret" not in repr(listed)


async def test_only_disabled_providers_are_not_probed() -> None:
    probes = Probes({})
    only_off = FederationSettings(providers=SETTINGS.providers[3:])
    assert [p.state for p in await ListIdentityProviders(Live(only_off), probes)(ADMIN)] == [
        "disabled"]  # fmt: skip
    assert probes.calls == 0


@pytest.mark.parametrize("role", [Role.VIEWER, Role.OPERATOR])
async def test_viewer_and_operator_are_refused(role: Role) -> None:
    probes = Probes({})
    with pytest.raises(Forbidden):
        await ListIdentityProviders(Live(SETTINGS), probes)(Principal("x", role, "org-a"))
    assert probes.calls == 0
