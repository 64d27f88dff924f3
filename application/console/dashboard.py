"""The admin console's dashboard (docs/reference/console.md): logins and failed logins per hour over
the last 24 hours, live sessions and users, and — for a superadmin — the signing keys with their
algorithms.

Access by ``domain.policy``: ``VIEW_DASHBOARD`` (org_admin and superadmin; viewer and operator
→ ``Forbidden``), counted over the caller's organization (``list_scope``: a superadmin counts
every organization, or ``org_id``); the keys only when ``policy.can(actor,
VIEW_SIGNING_KEYS)`` (superadmin). The login counts read the audit log (``login.succeeded``,
``login.failed``), at most ``MAX_COUNTED`` rows of each type (a busier day shows the cap and
``capped``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

import attrs

from application.ports import Clock, Signer, Storage, UnitOfWork
from domain import policy
from domain.audit import AuditQuery
from domain.policy import Actor, Operation

__all__ = ["HOURS", "MAX_COUNTED", "Dashboard", "DashboardView", "HourCount", "SigningKey"]

HOURS = 24
MAX_COUNTED = 10_000
_PAGE = 1_000


@attrs.frozen
class HourCount:
    """One hour of the chart: ``start`` (UTC, on the hour), ``logins`` and ``failures``."""

    start: datetime
    logins: int
    failures: int


@attrs.frozen
class SigningKey:
    """A key of the JWKS: ``kid``, ``alg`` (``RS256``, ``ES256``, ``ML-DSA-44``...), ``kty``."""

    kid: str
    alg: str
    kty: str


@attrs.frozen
class DashboardView:
    """What the dashboard shows: ``hours`` (oldest first, ``HOURS`` of them), the live
    ``active_sessions``, the ``users``, ``signing_keys`` (None: not the caller's to see) and
    ``capped`` (a count reached ``MAX_COUNTED``)."""

    hours: list[HourCount]
    active_sessions: int
    users: int
    signing_keys: list[SigningKey] | None
    capped: bool


@attrs.frozen
class Dashboard:
    """``await dashboard(actor, org_id=None)`` → ``DashboardView``; raises ``Forbidden``
    below org_admin and ``NotFound`` for an org_admin naming another ``org_id``."""

    _storage: Storage
    _signer: Signer
    _clock: Clock

    async def __call__(self, actor: Actor, *, org_id: str | None = None) -> DashboardView:
        """The dashboard of what ``actor`` may see."""
        policy.require(actor, Operation.VIEW_DASHBOARD)
        scope = policy.list_scope(actor, Operation.LIST_AUDIT_EVENTS, org_id)
        now = self._clock.now()
        first = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=HOURS - 1)
        async with self._storage.begin() as uow:
            logins, capped_ok = await _times(uow, AuditQuery(scope, None, "login.succeeded", first))
            failures, capped_ko = await _times(uow, AuditQuery(scope, None, "login.failed", first))
            sessions = await uow.sessions.count_live(scope, now)
            users = await uow.users.count(scope)
        hours = [
            HourCount(
                start,
                sum(1 for t in logins if start <= t < start + timedelta(hours=1)),
                sum(1 for t in failures if start <= t < start + timedelta(hours=1)),
            )
            for start in (first + timedelta(hours=i) for i in range(HOURS))
        ]
        keys = self.signing_keys(actor) if policy.can(actor, Operation.VIEW_SIGNING_KEYS) else None
        return DashboardView(hours, sessions, users, keys, capped_ok or capped_ko)

    def signing_keys(self, actor: Actor) -> list[SigningKey]:
        """The keys of the JWKS (the active ones first), for a superadmin; ``Forbidden`` for
        anyone else (``VIEW_SIGNING_KEYS``)."""
        policy.require(actor, Operation.VIEW_SIGNING_KEYS)
        return [
            SigningKey(str(k.get("kid", "")), str(k.get("alg", "")), str(k.get("kty", "")))
            for k in self._signer.jwks().get("keys", [])
        ]


async def _times(uow: UnitOfWork, query: AuditQuery) -> tuple[list[datetime], bool]:
    """When the events matching ``query`` occurred (at most ``MAX_COUNTED``), and whether the
    cap was reached."""
    found: list[datetime] = []
    before: str | None = None
    while len(found) < MAX_COUNTED:
        rows = await uow.audit.list_page(query, before, _PAGE)
        found += [e.occurred_at for e in rows]
        if len(rows) < _PAGE:
            return found[:MAX_COUNTED], False
        before = rows[-1].id
    return found[:MAX_COUNTED], True
