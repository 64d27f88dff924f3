"""The in-memory users and groups repositories over a unit's working copy."""

from __future__ import annotations

from datetime import datetime

import attrs

from adapters.persistence.memory.unit import MemoryUnit, RotatedToken
from adapters.persistence.times import require_aware
from application.ports import GroupRepo, UserRepo
from domain.device import DeviceGrant
from domain.errors import Conflict, EmailTaken, NotFound
from domain.federation import FederatedIdentity
from domain.model import (
    EmailToken,
    Group,
    GroupSummary,
    MfaChallenge,
    RefreshToken,
    Role,
    Session,
    User,
)
from domain.oidc import AuthorizationCode, Consent, HostedSession
from domain.passkeys import Passkey


class MemoryUserRepo(UserRepo):
    """``UserRepo`` over the working copy. Emails are stored lower-case; uniqueness is by email."""

    def __init__(self, stage: MemoryUnit) -> None:
        self._s = stage

    def _email_owner(self, email: str) -> str | None:
        for user in self._s.view.users.values():
            if user.email == email:
                return user.id
        return None

    async def add(self, user: User) -> None:
        """Insert ``user``. Raises ``EmailTaken`` (email exists) or ``Conflict`` (id exists)."""
        user = attrs.evolve(user, email=user.email.lower())
        require_aware(user.created_at)
        if self._email_owner(user.email) is not None:
            raise EmailTaken()
        if user.id in self._s.view.users:
            raise Conflict(f"user id {user.id} exists")
        self._s.write("users")[user.id] = user

    async def get(self, user_id: str) -> User | None:
        """The user with this id, or None."""
        user = self._s.view.users.get(user_id)
        return None if user is None else counted(self._s, user)

    async def get_with_groups(self, user_id: str) -> tuple[User, list[str]] | None:
        """The user and the sorted ids of its groups, or None."""
        user = self._s.view.users.get(user_id)
        if user is None:
            return None
        groups = sorted(g for g, m in self._s.view.members.items() if user_id in m)
        return counted(self._s, user), groups

    async def get_by_email(self, email: str) -> User | None:
        """The user with this email (compared lower-case), or None."""
        owner = self._email_owner(email.lower())
        return None if owner is None else counted(self._s, self._s.view.users[owner])

    async def update(self, user: User) -> None:
        """Replace the user with the same id. Raises ``NotFound``, or ``EmailTaken``."""
        user = attrs.evolve(user, email=user.email.lower())
        if user.id not in self._s.view.users:
            raise NotFound(f"user {user.id} not found")
        owner = self._email_owner(user.email)
        if owner is not None and owner != user.id:
            raise EmailTaken()
        self._s.write("users")[user.id] = user

    async def list_page(
        self, org_id: str | None, after: str | None, limit: int, email_prefix: str | None = None
    ) -> list[User]:
        """Up to ``limit`` users with ``id > after`` ordered by id, of ``org_id`` (None = all),
        whose email starts with ``email_prefix`` (lower-case; None = any)."""
        rows = [
            u
            for u in self._s.view.users.values()
            if (org_id is None or u.org_id == org_id)
            and (after is None or u.id > after)
            and (email_prefix is None or u.email.startswith(email_prefix))
        ]
        rows.sort(key=lambda u: u.id)
        return [counted(self._s, u) for u in rows[: max(0, limit)]]

    async def count(self, org_id: str | None) -> int:
        """How many users ``org_id`` holds (None: every organization)."""
        return sum(1 for u in self._s.view.users.values() if org_id is None or u.org_id == org_id)

    async def count_by_role(self, role: Role) -> int:
        """How many enabled users hold ``role``."""
        return sum(1 for u in self._s.view.users.values() if u.role == role and not u.disabled)

    async def delete(self, user_id: str) -> bool:
        """Delete the user with its sessions, tokens, rotated records, email tokens, second
        factors, passkeys, memberships, authorization codes, consents, hosted sessions,
        device grants it decided, federated identities (and the started logins linking to it) and
        its SCIM record."""
        view = self._s.view
        if user_id not in view.users:
            return False
        del self._s.write("users")[user_id]
        for name in ("tokens", "rotated", "sessions", "email_tokens", "mfa_challenges", "passkeys",
                     "codes", "consents", "hosted", "identities", "device_grants"):  # fmt: skip
            table = getattr(view, name)
            gone = [k for k, row in table.items() if _user_of(row) == user_id]
            if gone:
                writable = self._s.write(name)
                for k in gone:
                    del writable[k]
        gone_flows = [k for k, f in view.flows.items() if f.link_user_id == user_id]
        for k in gone_flows:
            del self._s.write("flows")[k]
        for name in ("mfa_totp", "mfa_recovery", "user_handles", "scim_users"):
            if user_id in getattr(view, name):
                del self._s.write(name)[user_id]
        for group_id, members in list(view.members.items()):
            if user_id in members:
                del self._s.write_members(group_id)[user_id]
        return True


def counted(stage: MemoryUnit, user: User) -> User:
    """``user`` with its passkey count (``User.passkeys``), as the SQL stores read it."""
    keys = sum(1 for p in stage.view.passkeys.values() if p.user_id == user.id)
    return attrs.evolve(user, passkeys=keys) if keys != user.passkeys else user


def _user_of(
    row: RefreshToken
    | RotatedToken
    | Session
    | EmailToken
    | MfaChallenge
    | Passkey
    | AuthorizationCode
    | Consent
    | HostedSession
    | FederatedIdentity
    | DeviceGrant,
) -> str | None:
    return row.token.user_id if isinstance(row, RotatedToken) else row.user_id


class MemoryGroupRepo(GroupRepo):
    """``GroupRepo`` over the working copy. Group names are unique per organization (exact)."""

    def __init__(self, stage: MemoryUnit) -> None:
        self._s = stage

    def _name_owner(self, org_id: str, name: str) -> str | None:
        for g in self._s.view.groups.values():
            if g.org_id == org_id and g.name == name:
                return g.id
        return None

    def _summary(self, group: Group) -> GroupSummary:
        return GroupSummary(group, len(self._s.view.members.get(group.id, {})))

    async def add(self, group: Group) -> None:
        """Insert. Raises ``Conflict`` on a duplicate name in the org or a duplicate id."""
        require_aware(group.created_at)
        if self._name_owner(group.org_id, group.name) is not None:
            raise Conflict(f"group {group.name!r} exists in organization {group.org_id!r}")
        if group.id in self._s.view.groups:
            raise Conflict(f"group id {group.id} exists")
        self._s.write("groups")[group.id] = group

    async def get(self, group_id: str) -> GroupSummary | None:
        """The group with its member count, or None."""
        group = self._s.view.groups.get(group_id)
        return None if group is None else self._summary(group)

    async def rename(self, group_id: str, name: str) -> None:
        """Rename. Raises ``NotFound``, or ``Conflict`` on a duplicate name in the org."""
        group = self._s.view.groups.get(group_id)
        if group is None:
            raise NotFound(f"group {group_id} not found")
        owner = self._name_owner(group.org_id, name)
        if owner is not None and owner != group_id:
            raise Conflict(f"group {name!r} exists in organization {group.org_id!r}")
        self._s.write("groups")[group_id] = attrs.evolve(group, name=name)

    async def delete(self, group_id: str) -> bool:
        """Delete the group, its memberships and its SCIM record; False if it did not exist."""
        if group_id not in self._s.view.groups:
            return False
        del self._s.write("groups")[group_id]
        self._s.write("members").pop(group_id, None)
        if group_id in self._s.view.scim_groups:
            del self._s.write("scim_groups")[group_id]
        return True

    async def list_page(
        self, org_id: str | None, after: str | None, limit: int
    ) -> list[GroupSummary]:
        """Up to ``limit`` groups with ``id > after`` ordered by id, of ``org_id`` (None = all)."""
        rows = [
            g
            for g in self._s.view.groups.values()
            if (org_id is None or g.org_id == org_id) and (after is None or g.id > after)
        ]
        rows.sort(key=lambda g: g.id)
        return [self._summary(g) for g in rows[: max(0, limit)]]

    async def add_member(self, group_id: str, user_id: str, now: datetime) -> bool:
        """Add a membership (idempotent); True if new. Raises ``NotFound`` for an unknown
        group or user."""
        require_aware(now)
        if group_id not in self._s.view.groups:
            raise NotFound(f"group {group_id} not found")
        if user_id not in self._s.view.users:
            raise NotFound(f"user {user_id} not found")
        if user_id in self._s.view.members.get(group_id, {}):
            return False
        self._s.write_members(group_id)[user_id] = now
        return True

    async def remove_member(self, group_id: str, user_id: str) -> bool:
        """Remove a membership; True if it existed."""
        if user_id not in self._s.view.members.get(group_id, {}):
            return False
        del self._s.write_members(group_id)[user_id]
        return True

    async def members(self, group_id: str) -> list[User]:
        """The group's members ordered by id (empty for an unknown group)."""
        ids = sorted(self._s.view.members.get(group_id, {}))
        return [counted(self._s, self._s.view.users[i]) for i in ids if i in self._s.view.users]

    async def groups_of(self, user_id: str) -> list[str]:
        """Sorted ids of the groups ``user_id`` belongs to."""
        return sorted(g for g, m in self._s.view.members.items() if user_id in m)

    async def remove_user_from_org_groups(self, user_id: str, org_id: str) -> int:
        """Remove the user from every group of ``org_id``; returns how many memberships went."""
        count = 0
        for group_id, members in list(self._s.view.members.items()):
            group = self._s.view.groups.get(group_id)
            if group is not None and group.org_id == org_id and user_id in members:
                del self._s.write_members(group_id)[user_id]
                count += 1
        return count
