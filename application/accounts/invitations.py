"""Invitations, the administrators' side (docs/reference/invitations.md): invite an email into
an organization with a role and groups, list the invitations, send one again, revoke one. The
invited person's side (opening the link, creating the account) is ``application.login
.invitation``.

Access is decided by ``domain.policy`` in its fixed order: the role (``Forbidden``), the
organization scope (``NotFound``), then the invitation's rules — an org_admin invites with a role
it may grant only (the escalation rule of a role change), into its own organization, with groups
of that organization. Every change runs in one unit of work with its audit row; the message with
the link is posted after the commit (``InvitationMail``), so the answer never waits for the mail
server. The link's token is 256 bits from ``secrets``; only its SHA-256 is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

import attrs

from application.events.audit import record
from application.events.catalog import Event
from application.events.invitations import (
    InvitationCreated,
    InvitationResent,
    InvitationRevoked,
)
from application.ports import Clock, EmailNormalizer, EventBus, Storage, UnitOfWork
from application.shared.checks import check_org_id, invalid, parse_role
from application.shared.pagination import Listing, Page
from application.shared.settings import AuthSettings, Live
from application.shared.steps import IdFactory, new_id, new_opaque_token, publish_all
from domain import policy
from domain.errors import Conflict, EmailTaken, NotFound
from domain.invitations import MAX_INVITATION_GROUPS, Invitation, InvitationState, InvitationStatus
from domain.policy import Actor, Operation

__all__ = [
    "CreateInvitation",
    "InvitationMail",
    "InvitationView",
    "ListInvitations",
    "ResendInvitation",
    "RevokeInvitation",
]

InvitationMail = Callable[[Invitation, str], None]
"""Posts the invitation's message with the link of the clear token (second argument) to
``invitation.email``, in the background after the commit; never raises (the container wires
``application.recovery.invitation_mail``)."""

_NOT_FOUND = "invitation not found"


@attrs.frozen
class InvitationView:
    """An invitation with its ``status`` now (``expired`` derived from the time), as the API
    renders it: ``{"id", "org_id", "email", "role", "group_ids", "invited_by", "created_at",
    "expires_at", "status"}`` — never the link or its hash."""

    invitation: Invitation
    status: InvitationStatus


def check_group_ids(group_ids: Sequence[str] | None) -> tuple[str, ...]:
    """The group ids of an invitation, duplicates dropped, in the order given. Raises
    ``ValidationFailed`` naming ``group_ids`` for anything but a list of at most
    ``MAX_INVITATION_GROUPS`` non-empty strings."""
    if group_ids is None:
        return ()
    if isinstance(group_ids, str) or not isinstance(group_ids, Sequence):
        raise invalid("group_ids", "must be a list of strings")
    if any(not isinstance(g, str) or not g or len(g) > 128 for g in group_ids):
        raise invalid("group_ids", "must be a list of group ids (strings)")
    unique = tuple(dict.fromkeys(group_ids))
    if len(unique) > MAX_INVITATION_GROUPS:
        raise invalid("group_ids", f"must name at most {MAX_INVITATION_GROUPS} groups")
    return unique


@attrs.frozen
class CreateInvitation:
    """POST /invitations ``{"email", "role", "group_ids"?, "org_id"?}``
    (docs/reference/invitations.md): org_admin and superadmin.

    In order: viewer/operator → ``Forbidden``; a bad ``email``, ``role``, ``group_ids`` or
    ``org_id`` → ``ValidationFailed`` naming it; an org_admin naming another organization →
    ``NotFound``; an org_admin inviting with ``superadmin`` → ``Forbidden``; a group missing or
    of another organization → ``ValidationFailed`` (``group_ids``); an account with the email
    (in any organization) → ``EmailTaken`` (409 ``email_taken``: an administrator may know, ADR
    0051); a live pending invitation of the email into the organization → ``Conflict`` (resend
    it instead). Records ``invitation.created`` with the invitation, posts the message after the
    commit, publishes ``InvitationCreated``; returns the ``InvitationView``.
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock
    _auth: Live[AuthSettings]
    _normalize_email: EmailNormalizer
    _mail: InvitationMail
    _ids: IdFactory = new_id

    async def __call__(
        self,
        actor: Actor,
        email: str,
        role: str,
        group_ids: Sequence[str] | None = None,
        org_id: str | None = None,
    ) -> InvitationView:
        """Invite ``email`` into ``org_id`` (default: the actor's) as ``role`` in ``group_ids``."""
        policy.require(actor, Operation.CREATE_INVITATION)
        canonical = self._normalize_email(email)
        wanted = parse_role(role)
        groups = check_group_ids(group_ids)
        org = check_org_id(org_id) if org_id is not None else None
        org = policy.invitation_org(actor, org, wanted)
        clear, digest = new_opaque_token()
        now = self._clock.now()
        ttl = timedelta(seconds=self._auth.current.invitation_ttl)
        invitation = Invitation(self._ids(), org, canonical, wanted, groups, actor.actor_id, now,
                                now + ttl, digest)  # fmt: skip
        created = InvitationCreated(invitation.id, org, actor.actor_id, wanted.value)
        async with self._storage.begin() as uow:
            found = [await uow.groups.get(g) for g in groups]
            policy.check_invitation_groups(
                org, groups, [None if f is None else f.group for f in found]
            )
            if await uow.users.get_by_email(canonical) is not None:
                raise EmailTaken("an account with this email exists")
            if await uow.invitations.find_open(org, canonical, now) is not None:
                raise Conflict("a pending invitation of this email exists: resend it")
            await uow.invitations.add(invitation)
            await record(uow, [created], now)
            await uow.commit()
        self._mail(invitation, clear)
        await self._bus.publish(created)
        return InvitationView(invitation, invitation.status(now))


class _InvitationListing(Listing[Invitation]):
    def __init__(self, storage: Storage) -> None:
        super().__init__(
            storage, "invitations", Operation.LIST_INVITATIONS, lambda uow: uow.invitations,
            lambda i: i.id,
        )  # fmt: skip


@attrs.frozen
class ListInvitations:
    """GET /invitations ``?limit&cursor&org_id`` (docs/reference/invitations.md): org_admin (its
    organization; another ``org_id`` → ``NotFound``) and superadmin (every organization, or
    ``org_id``); viewer/operator → ``Forbidden``. Keyset pages by id as every listing
    (``application.shared.pagination``); each with its status now."""

    _storage: Storage
    _clock: Clock

    async def __call__(
        self,
        actor: Actor,
        *,
        limit: int | None = None,
        cursor: str | None = None,
        org_id: str | None = None,
    ) -> Page[InvitationView]:
        """One page of the invitations ``actor`` may see."""
        page = await _InvitationListing(self._storage)(
            actor, limit=limit, cursor=cursor, org_id=org_id
        )
        now = self._clock.now()
        return Page(tuple(InvitationView(i, i.status(now)) for i in page.items), page.next_cursor)


async def _invitation_in_scope(
    uow: UnitOfWork, actor: Actor, invitation_id: str, operation: Operation
) -> Invitation:
    """The invitation, after ``policy.check_invitation_change``; ``NotFound`` when missing."""
    found = await uow.invitations.get(invitation_id)
    if found is None:
        raise NotFound(_NOT_FOUND)
    policy.check_invitation_change(actor, found, operation)
    return found


@attrs.frozen
class ResendInvitation:
    """POST /invitations/{id}/resend (docs/reference/invitations.md): a new link (the old one
    stops working) valid ``auth.invitation_ttl`` seconds from now, mailed again.

    In order: viewer/operator → ``Forbidden``; missing or outside an org_admin's organization →
    ``NotFound``; an org_admin and a superadmin's invitation → ``Forbidden``; accepted or
    revoked → ``Conflict``. An expired pending invitation may be resent. Records
    ``invitation.resent``; returns the ``InvitationView``.
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock
    _auth: Live[AuthSettings]
    _mail: InvitationMail

    async def __call__(self, actor: Actor, invitation_id: str) -> InvitationView:
        """Send ``invitation_id`` again with a new link."""
        policy.require(actor, Operation.RESEND_INVITATION)
        clear, digest = new_opaque_token()
        now = self._clock.now()
        expires_at = now + timedelta(seconds=self._auth.current.invitation_ttl)
        async with self._storage.begin() as uow:
            found = await _invitation_in_scope(uow, actor, invitation_id,
                                               Operation.RESEND_INVITATION)  # fmt: skip
            renewed = await uow.invitations.renew(found.id, digest, expires_at, actor.actor_id)
            if renewed is None:
                raise Conflict(f"the invitation is {found.status(now).value}, not pending")
            resent = InvitationResent(found.id, found.org_id, actor.actor_id)
            await record(uow, [resent], now)
            await uow.commit()
        self._mail(renewed, clear)
        await self._bus.publish(resent)
        return InvitationView(renewed, renewed.status(now))


@attrs.frozen
class RevokeInvitation:
    """DELETE /invitations/{id} (docs/reference/invitations.md): its link stops working.

    In order: viewer/operator → ``Forbidden``; missing or outside an org_admin's organization →
    ``NotFound``; an org_admin and a superadmin's invitation → ``Forbidden``; accepted →
    ``Conflict``. Revoking a revoked invitation changes nothing (idempotent). Records
    ``invitation.revoked``.
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock

    async def __call__(self, actor: Actor, invitation_id: str) -> None:
        """Revoke ``invitation_id``."""
        policy.require(actor, Operation.REVOKE_INVITATION)
        now: datetime = self._clock.now()
        events: list[Event] = []
        async with self._storage.begin() as uow:
            found = await _invitation_in_scope(uow, actor, invitation_id,
                                               Operation.REVOKE_INVITATION)  # fmt: skip
            if found.state is InvitationState.REVOKED:
                return
            if await uow.invitations.revoke(found.id) is None:
                raise Conflict("the invitation was accepted already")
            events.append(InvitationRevoked(found.id, found.org_id, actor.actor_id))
            await record(uow, events, now)
            await uow.commit()
        await publish_all(self._bus, events)
