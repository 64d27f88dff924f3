"""The in-memory tables and the copy-on-write working copy of one unit of work."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import attrs

from domain.audit import AuditEvent
from domain.clients import Client
from domain.device import DeviceGrant
from domain.federation import FederatedIdentity, FederationFlow
from domain.invitations import Invitation
from domain.model import (
    EmailToken,
    Group,
    MfaChallenge,
    RefreshToken,
    Session,
    TotpCredential,
    User,
)
from domain.oidc import AuthorizationCode, Consent, HostedSession
from domain.outbox import OutboxItem
from domain.passkeys import Ceremony, Passkey
from domain.pushed import PushedRequest
from domain.scim import ScimRecord
from domain.webhooks import Webhook, WebhookDelivery


class Tables:
    """The committed state: plain dicts of frozen domain objects.

    ``members`` maps group id to ``{user id: membership created_at}``; ``rotated`` maps a
    rotated token's hash to ``RotatedToken`` (the token, when it was rotated, how often reused);
    ``mfa_recovery`` maps a user id to the hashes of its unused recovery codes; ``revoked`` maps
    a revoked access token's ``jti`` to its client id and expiry; ``consents`` is keyed by
    ``(user_id, client_id)``, ``codes`` by code hash, ``hosted`` by the hosted session's hash,
    ``identities`` by ``(issuer, subject)``, ``flows`` by state hash, ``nonces`` maps
    ``(issuer, nonce hash)`` to its expiry; ``invitations`` are keyed by id, ``device_grants`` by
    the device code's hash, ``outbox`` by item id, ``webhooks`` and
    ``webhook_deliveries`` by id, ``scim_users`` and ``scim_groups`` by user and group id.
    """

    def __init__(self) -> None:
        self.users: dict[str, User] = {}
        self.tokens: dict[str, RefreshToken] = {}
        self.rotated: dict[str, RotatedToken] = {}
        self.sessions: dict[str, Session] = {}
        self.groups: dict[str, Group] = {}
        self.members: dict[str, dict[str, datetime]] = {}
        self.email_tokens: dict[str, EmailToken] = {}
        self.mfa_totp: dict[str, TotpCredential] = {}
        self.mfa_recovery: dict[str, frozenset[str]] = {}
        self.mfa_challenges: dict[str, MfaChallenge] = {}
        self.audit: dict[str, AuditEvent] = {}
        self.clients: dict[str, Client] = {}
        self.revoked: dict[str, tuple[str, datetime]] = {}
        self.dpop_proofs: dict[str, datetime] = {}
        self.passkeys: dict[str, Passkey] = {}
        self.user_handles: dict[str, bytes] = {}
        self.ceremonies: dict[str, Ceremony] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.consents: dict[tuple[str, str], Consent] = {}
        self.hosted: dict[str, HostedSession] = {}
        self.identities: dict[tuple[str, str], FederatedIdentity] = {}
        self.flows: dict[str, FederationFlow] = {}
        self.nonces: dict[tuple[str, str], datetime] = {}
        self.invitations: dict[str, Invitation] = {}
        self.device_grants: dict[str, DeviceGrant] = {}
        self.pushed_requests: dict[str, PushedRequest] = {}
        self.outbox: dict[str, OutboxItem] = {}
        self.webhooks: dict[str, Webhook] = {}
        self.webhook_deliveries: dict[str, WebhookDelivery] = {}
        self.scim_users: dict[str, ScimRecord] = {}
        self.scim_groups: dict[str, ScimRecord] = {}


@attrs.frozen
class RotatedToken:
    """A remembered rotated token: the record, when it was rotated, how often reused since."""

    token: RefreshToken
    rotated_at: datetime
    reuse_count: int = 0


class MemoryUnit:
    """The working copy of one unit of work: reads see the committed tables until a table is
    first written, which copies it (copy-on-write). ``publish()`` hands the result back."""

    _TABLES = ("users", "tokens", "rotated", "sessions", "groups", "members", "email_tokens",
               "mfa_totp", "mfa_recovery", "mfa_challenges", "audit", "clients",
               "revoked", "dpop_proofs", "passkeys", "user_handles", "ceremonies", "codes",
               "consents", "hosted", "identities", "flows", "nonces", "invitations",
               "device_grants", "pushed_requests", "outbox", "webhooks",
               "webhook_deliveries", "scim_users", "scim_groups")  # fmt: skip

    def __init__(self, base: Tables) -> None:
        self._base = base
        self._copied: set[str] = set()
        self._copied_groups: set[str] = set()
        self.view = Tables()
        self.reset()

    def reset(self) -> None:
        """Start again from the committed tables (after a commit)."""
        for name in self._TABLES:
            setattr(self.view, name, getattr(self._base, name))
        self._copied.clear()
        self._copied_groups.clear()

    def write(self, name: str) -> Any:
        """The table ``name``, copied on first write."""
        if name not in self._copied:
            setattr(self.view, name, dict(getattr(self.view, name)))
            self._copied.add(name)
        return getattr(self.view, name)

    def purge(self, name: str, expired: Callable[[Any], bool], limit: int | None) -> int:
        """Delete up to ``limit`` rows (all with None) of table ``name`` for which
        ``expired(row)`` is true; returns how many went (housekeeping's bounded batches)."""
        gone = [key for key, row in getattr(self.view, name).items() if expired(row)][:limit]
        if gone:
            table = self.write(name)
            for key in gone:
                del table[key]
        return len(gone)

    def write_members(self, group_id: str) -> dict[str, datetime]:
        """The member dict of ``group_id`` (created if absent), copied on first write."""
        members: dict[str, dict[str, datetime]] = self.write("members")
        if group_id not in self._copied_groups:
            members[group_id] = dict(members.get(group_id, {}))
            self._copied_groups.add(group_id)
        return members[group_id]

    def publish(self) -> None:
        """Make the working copy the committed state."""
        for name in self._copied:
            setattr(self._base, name, getattr(self.view, name))
        self.reset()
