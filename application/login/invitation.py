"""Invitations, the invited person's side (docs/reference/invitations.md): the page shows the
invitation of a link (``open``), and accepting it creates the account — with the invited email
(verified: the link reached it), role, organization and groups — and signs it in through a
``LoginStart`` (the hosted page's session), in one unit of work.

Single use under races: the acceptance is one conditional update (``InvitationRepo.accept``:
pending and live → accepted) in the unit of work that creates the account, so of concurrent
acceptances of one link exactly one creates an account; a link that is unknown, expired,
revoked or used gets ``InvalidInvitation`` and nothing is created. An email that got an account
meanwhile (another invitation, a sign-up) gets ``EmailTaken`` and nothing changes.

A federated acceptance (``accept_federated``) is the same account creation, with the
identity at the provider linked to it; the callback's checks are ``application.login.federated``'s.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import attrs

from application.events.audit import record
from application.events.catalog import Event, GroupMembershipChanged, UserRegistered
from application.events.invitations import InvitationAccepted
from application.login.finish import LoginStart
from application.ports import Clock, EventBus, Hasher, Storage, UnitOfWork
from application.shared.settings import AuthSettings, Live
from application.shared.steps import IdFactory, hash_token, new_id, publish_all
from domain.errors import EmailTaken, InvalidInvitation
from domain.invitations import Invitation
from domain.model import User, check_password_policy

__all__ = ["MAX_TOKEN_LENGTH", "PASSWORD_METHOD", "InvitationAcceptance", "LinkStep", "join"]

T = TypeVar("T")

MAX_TOKEN_LENGTH = 128
"""A longer token cannot be one of ours (43 characters): refused without a lookup."""
PASSWORD_METHOD = "password"  # noqa: S105 - a method's name, not a secret
"""``invitation.accepted``'s ``details.method`` and the login method of a password acceptance."""
LinkStep = Callable[[UnitOfWork, User], Awaitable[list[Event]]]
"""Links the new account to another provider's identity in the acceptance's unit of work
(a federated acceptance); the events to record."""
_INVALID = "the invitation link is invalid, expired, revoked or used already"


def _digest(token: str) -> str:
    if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_LENGTH:
        raise InvalidInvitation(_INVALID)
    return hash_token(token)


async def join(uow: UnitOfWork, invitation: Invitation, user: User, method: str) -> Sequence[Event]:
    """Store ``user`` (made from ``invitation``) and its memberships of the invitation's groups
    that still exist in its organization, in ``uow``; the events to record. Raises
    ``EmailTaken`` when an account has the email now."""
    await uow.users.add(user)
    events: list[Event] = [UserRegistered(user.id, user.org_id)]
    for group_id in invitation.group_ids:
        summary = await uow.groups.get(group_id)
        if summary is None or summary.group.org_id != user.org_id:
            continue  # deleted since the invitation
        if await uow.groups.add_member(group_id, user.id, user.created_at):
            events.append(GroupMembershipChanged(group_id, user.id, invitation.invited_by, True,
                                                 user.org_id))  # fmt: skip
    events.append(InvitationAccepted(invitation.id, invitation.org_id, user.id, method))
    return events


@attrs.frozen
class InvitationAcceptance:
    """``await acceptance.open(token)`` → the ``Invitation`` its page shows;
    ``await acceptance.accept_with_password(token, password, start)`` → what ``start`` opened
    (the hosted session's cookie)."""

    _storage: Storage
    _hasher: Hasher
    _bus: EventBus
    _clock: Clock
    _auth: Live[AuthSettings]
    _ids: IdFactory = new_id

    async def open(self, token: str) -> Invitation:
        """The pending, live invitation of the link ``token``. Raises ``InvalidInvitation`` for
        an unknown, expired, revoked or accepted one."""
        return await self.open_hash(_digest(token))

    async def open_hash(self, token_hash: str) -> Invitation:
        """``open`` by the SHA-256 hex of the link's token (a federated acceptance keeps the
        hash, never the token). Raises ``InvalidInvitation``."""
        async with self._storage.read() as uow:
            found = await uow.invitations.find_by_token(token_hash)
        if found is None or not found.is_open(self._clock.now()):
            raise InvalidInvitation(_INVALID)
        return found

    @staticmethod
    def hash_of(token: str) -> str:
        """The SHA-256 hex of a link's token, as stored. Raises ``InvalidInvitation`` for
        something that cannot be a token (empty, too long)."""
        return _digest(token)

    def new_user(self, invitation: Invitation, password_hash: str) -> User:
        """The account ``invitation`` creates: its email (verified), role and organization."""
        return User(id=self._ids(), email=invitation.email, password_hash=password_hash,
                    role=invitation.role, org_id=invitation.org_id, created_at=self._clock.now(),
                    email_verified=True)  # fmt: skip

    async def accept_with_password(self, token: str, password: str, start: LoginStart[T]) -> T:
        """Accept the invitation of ``token`` with a new ``password``: the account is created,
        joins the groups, and ``start`` signs it in (method ``password``); ``user.registered``,
        ``group.member_added`` (each), ``invitation.accepted`` and ``login.succeeded`` are
        recorded with it. Raises ``ValidationFailed`` (the password policy, checked first;
        field ``password``), ``InvalidInvitation``, ``EmailTaken``; then nothing changes."""
        check_password_policy(password, self._auth.current.password_min_length)
        invitation = await self.open(token)
        password_hash = await self._hasher.hash(password)  # outside the transaction (slow)
        user = self.new_user(invitation, password_hash)
        return await self.accept(invitation.token_hash, user, PASSWORD_METHOD, start)

    async def accept(
        self,
        token_hash: str,
        user: User,
        method: str,
        start: LoginStart[T],
        also: Sequence[Event] = (),
        link: LinkStep | None = None,
    ) -> T:
        """In one unit of work: spend the link ``token_hash`` (``InvalidInvitation`` when it is
        not pending and live), store ``user`` with its groups (``join``), run ``link`` (the
        federated identity, if any), then ``start`` (login ``method``); record and commit, then
        publish. ``also``: more events to record. Raises ``InvalidInvitation``, ``EmailTaken``
        and what ``link`` raises; then nothing is written."""
        now = self._clock.now()
        async with self._storage.begin() as uow:
            accepted = await uow.invitations.accept(token_hash, user.id, now)
            if accepted is None:
                raise InvalidInvitation(_INVALID)
            try:
                events = [*await join(uow, accepted, user, method)]
            except EmailTaken:
                raise EmailTaken("an account with this email exists already") from None
            if link is not None:
                events += await link(uow, user)
            started, opened = await start(uow, user, method)
            events = [*events, *also, *opened]
            await record(uow, events, now)
            await uow.commit()
        await publish_all(self._bus, events)
        return started
