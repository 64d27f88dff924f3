"""The configured identity providers as the admin console lists them (docs/reference/console.md,
docs/reference/federation.md): each ``[[federation.providers]]`` table in force, with what it does
for sign-in and, for an enabled one, its readiness (the ``federation`` readiness component's
view: whether its discovery answered). Read only: the list comes from the configuration.

Access by ``domain.policy``: ``VIEW_IDENTITY_PROVIDERS`` (org_admin and superadmin; viewer and
operator → ``Forbidden``). Providers serve every organization's sign-in page, so an org_admin
sees them all, as the actuator's readiness details already show them to it.
"""

from __future__ import annotations

import attrs

from application.federation.settings import FederationSettings
from application.ports import ProviderProbe, ProviderProbes
from application.shared.settings import Live
from domain import policy
from domain.policy import Actor, Operation

__all__ = ["IdentityProvider", "ListIdentityProviders"]


@attrs.frozen
class IdentityProvider:
    """One configured provider: ``id``, ``name`` (its button's text), ``kind`` (``oidc`` |
    ``github``), ``issuer`` (GitHub: its web base URL), ``enabled``, ``trust_email``,
    ``create_users``, ``org_id`` (new users' organization; empty: ``auth.default_org_id``),
    ``allowed_domains`` (empty: any), and ``state``: ``reachable`` | ``unreachable`` |
    ``checking`` | ``disabled`` (not probed), with ``error`` when unreachable. Never the
    client secret."""

    id: str
    name: str
    kind: str
    issuer: str
    enabled: bool
    trust_email: bool
    create_users: bool
    org_id: str
    allowed_domains: tuple[str, ...]
    state: str
    error: str = ""


@attrs.frozen
class ListIdentityProviders:
    """The console's page of identity providers: viewer/operator → ``Forbidden``. Returns every
    ``[[federation.providers]]`` table in force (a refresh changes them), in configuration
    order, each an ``IdentityProvider`` with its probe (``ProviderProbes``, which waits at most
    about a second for a round under way)."""

    _settings: Live[FederationSettings]
    _probes: ProviderProbes

    async def __call__(self, actor: Actor) -> list[IdentityProvider]:
        """The providers with their readiness."""
        policy.require(actor, Operation.VIEW_IDENTITY_PROVIDERS)
        configured = self._settings.current.providers
        probes = await self._probes.probes() if any(p.enabled for p in configured) else {}
        listed = []
        for p in configured:
            probe = probes.get(p.id, ProviderProbe("checking")) if p.enabled else None
            listed.append(IdentityProvider(
                p.id, p.name, p.kind, p.upstream().issuer, p.enabled, p.trust_email,
                p.create_users, p.org_id, p.allowed_domains,
                "disabled" if probe is None else probe.state,
                "" if probe is None else probe.error,
            ))  # fmt: skip
        return listed
