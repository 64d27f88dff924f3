"""The SQLite repositories (users, groups) and the unit of work holding them with the token and
session stores of ``adapters.persistence.sqlite.tokens``."""

# Only module constants (column lists) are interpolated into SQL; values are always bound.
# ruff: noqa: S608

from __future__ import annotations

import sqlite3
from datetime import datetime

from adapters.persistence import _columns as cols
from adapters.persistence._rows import to_micros
from adapters.persistence.sqlite.audit import SqliteAuditLog
from adapters.persistence.sqlite.clients import SqliteClientRepo
from adapters.persistence.sqlite.email_tokens import SqliteEmailTokenStore
from adapters.persistence.sqlite.mfa import SqliteMfaStore
from adapters.persistence.sqlite.oidc import (
    SqliteAuthorizationCodeStore,
    SqliteConsentStore,
    SqliteHostedSessionStore,
)
from adapters.persistence.sqlite.passkeys import SqlitePasskeyRepo
from adapters.persistence.sqlite.tokens import SqliteSessionStore, SqliteTokenStore
from adapters.persistence.sqlite.unit import (
    _SqlQueries,
    _Statements,
    _summary,
    _user,
)
from application.ports import GroupRepo, UnitOfWork, UserRepo
from domain.errors import Conflict, EmailTaken, NotFound
from domain.model import Group, GroupSummary, Role, User


class SqliteUserRepo(_SqlQueries, UserRepo):
    """``UserRepo`` in the current transaction. Emails are stored lower-case (unique index)."""

    async def add(self, user: User) -> None:
        """Insert. Raises ``EmailTaken`` (email exists) or ``Conflict`` (id exists)."""
        try:
            await self._count(
                f"INSERT INTO users ({cols.USERS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    user.id,
                    user.email.lower(),
                    user.password_hash,
                    user.role.value,
                    user.org_id,
                    to_micros(user.created_at),
                    int(user.disabled),
                    int(user.email_verified),
                    int(user.mfa_enabled),
                ),
            )
        except sqlite3.IntegrityError as exc:
            if "users.email" in str(exc):
                raise EmailTaken() from None
            raise Conflict(f"user id {user.id} exists") from None

    async def get(self, user_id: str) -> User | None:
        """The user with this id, or None."""
        row = await self._one(f"SELECT {cols.USER_READ} FROM users WHERE id = ?", (user_id,))
        return None if row is None else _user(row)

    async def get_with_groups(self, user_id: str) -> tuple[User, list[str]] | None:
        """The user and the sorted ids of its groups (one statement), or None."""
        rows = await self._all(cols.USER_WITH_GROUPS.format(param="?"), (user_id,))
        if not rows:
            return None
        return _user(tuple(rows[0])[:-1]), sorted(r[-1] for r in rows if r[-1] is not None)

    async def get_by_email(self, email: str) -> User | None:
        """The user with this email (compared lower-case), or None."""
        row = await self._one(
            f"SELECT {cols.USER_READ} FROM users WHERE email = ?", (email.lower(),)
        )
        return None if row is None else _user(row)

    async def update(self, user: User) -> None:
        """Replace the user with the same id. Raises ``NotFound`` or ``EmailTaken``."""
        try:
            n = await self._count(
                "UPDATE users SET email = ?, password_hash = ?, role = ?, org_id = ?,"
                " disabled = ?, email_verified = ?, mfa_enabled = ? WHERE id = ?",
                (
                    user.email.lower(),
                    user.password_hash,
                    user.role.value,
                    user.org_id,
                    int(user.disabled),
                    int(user.email_verified),
                    int(user.mfa_enabled),
                    user.id,
                ),
            )
        except sqlite3.IntegrityError:
            raise EmailTaken() from None
        if n == 0:
            raise NotFound(f"user {user.id} not found")

    async def list_page(self, org_id: str | None, after: str | None, limit: int) -> list[User]:
        """Up to ``limit`` users with ``id > after`` ordered by id, of ``org_id`` (None = all)."""
        rows = await self._all(
            f"SELECT {cols.USER_READ} FROM users WHERE (?1 IS NULL OR org_id = ?1)"
            " AND (?2 IS NULL OR id > ?2) ORDER BY id LIMIT ?3",
            (org_id, after, max(0, limit)),
        )
        return [_user(r) for r in rows]

    async def count_by_role(self, role: Role) -> int:
        """How many enabled users hold ``role``."""
        row = await self._one(
            "SELECT count(*) FROM users WHERE role = ? AND disabled = 0", (role.value,)
        )
        return int(row[0])

    async def delete(self, user_id: str) -> bool:
        """Delete the user; its sessions, tokens and memberships go by ``ON DELETE CASCADE``."""
        return await self._count("DELETE FROM users WHERE id = ?", (user_id,)) > 0


class SqliteGroupRepo(_SqlQueries, GroupRepo):
    """``GroupRepo`` in the current transaction. Names are unique per organization (exact)."""

    async def add(self, group: Group) -> None:
        """Insert. Raises ``Conflict`` on a duplicate name in the org or a duplicate id."""
        try:
            await self._count(
                "INSERT INTO groups (id, name, org_id, created_at) VALUES (?, ?, ?, ?)",
                (group.id, group.name, group.org_id, to_micros(group.created_at)),
            )
        except sqlite3.IntegrityError as exc:
            if "groups.id" in str(exc):
                raise Conflict(f"group id {group.id} exists") from None
            raise Conflict(
                f"group {group.name!r} exists in organization {group.org_id!r}"
            ) from None

    async def get(self, group_id: str) -> GroupSummary | None:
        """The group with its member count, or None."""
        row = await self._one(f"{cols.GROUP_SUMMARY} WHERE g.id = ?", (group_id,))
        return None if row is None else _summary(row)

    async def rename(self, group_id: str, name: str) -> None:
        """Rename. Raises ``NotFound``, or ``Conflict`` on a duplicate name in the org."""
        try:
            n = await self._count("UPDATE groups SET name = ? WHERE id = ?", (name, group_id))
        except sqlite3.IntegrityError:
            raise Conflict(f"group {name!r} exists in this organization") from None
        if n == 0:
            raise NotFound(f"group {group_id} not found")

    async def delete(self, group_id: str) -> bool:
        """Delete the group and (by cascade) its memberships; False if it did not exist."""
        return await self._count("DELETE FROM groups WHERE id = ?", (group_id,)) > 0

    async def list_page(
        self, org_id: str | None, after: str | None, limit: int
    ) -> list[GroupSummary]:
        """Up to ``limit`` groups with ``id > after`` ordered by id, of ``org_id`` (None = all)."""
        rows = await self._all(
            f"{cols.GROUP_SUMMARY} WHERE (?1 IS NULL OR g.org_id = ?1)"
            " AND (?2 IS NULL OR g.id > ?2) ORDER BY g.id LIMIT ?3",
            (org_id, after, max(0, limit)),
        )
        return [_summary(r) for r in rows]

    async def add_member(self, group_id: str, user_id: str, now: datetime) -> bool:
        """Add a membership (idempotent); True if new. Raises ``NotFound`` for an unknown
        group or user."""
        try:
            n = await self._count(
                "INSERT INTO group_members (group_id, user_id, created_at) VALUES (?, ?, ?)"
                " ON CONFLICT (group_id, user_id) DO NOTHING",
                (group_id, user_id, to_micros(now)),
            )
        except sqlite3.IntegrityError:
            raise NotFound(f"group {group_id} or user {user_id} not found") from None
        return n > 0

    async def remove_member(self, group_id: str, user_id: str) -> bool:
        """Remove a membership; True if it existed."""
        n = await self._count(
            "DELETE FROM group_members WHERE group_id = ? AND user_id = ?", (group_id, user_id)
        )
        return n > 0

    async def members(self, group_id: str) -> list[User]:
        """The group's members ordered by id (empty for an unknown group)."""
        rows = await self._all(
            f"SELECT {cols.MEMBERS} FROM group_members m JOIN users u ON u.id = m.user_id"
            " WHERE m.group_id = ? ORDER BY u.id",
            (group_id,),
        )
        return [_user(r) for r in rows]

    async def groups_of(self, user_id: str) -> list[str]:
        """Sorted ids of the groups ``user_id`` belongs to."""
        rows = await self._all(
            "SELECT group_id FROM group_members WHERE user_id = ? ORDER BY group_id", (user_id,)
        )
        return [r[0] for r in rows]

    async def remove_user_from_org_groups(self, user_id: str, org_id: str) -> int:
        """Remove the user from every group of ``org_id``; returns how many memberships went."""
        return await self._count(
            "DELETE FROM group_members WHERE user_id = ?"
            " AND group_id IN (SELECT id FROM groups WHERE org_id = ?)",
            (user_id, org_id),
        )


class SqliteUnitOfWork(UnitOfWork):
    """``UnitOfWork``: one ``BEGIN IMMEDIATE`` transaction on the storage's one connection.

    ``commit()`` commits the changes so far; the next statement begins the next transaction:
    the unit goes on, and later changes need another ``commit()``. Raises ``StorageFault``.
    """

    def __init__(self, unit: _Statements) -> None:
        self._unit = unit
        self.users = SqliteUserRepo(unit)
        self.tokens = SqliteTokenStore(unit)
        self.sessions = SqliteSessionStore(unit)
        self.groups = SqliteGroupRepo(unit)
        self.email_tokens = SqliteEmailTokenStore(unit)
        self.mfa = SqliteMfaStore(unit)
        self.audit = SqliteAuditLog(unit)
        self.clients = SqliteClientRepo(unit)
        self.passkeys = SqlitePasskeyRepo(unit)
        self.codes = SqliteAuthorizationCodeStore(unit)
        self.consents = SqliteConsentStore(unit)
        self.hosted_sessions = SqliteHostedSessionStore(unit)

    async def commit(self) -> None:
        """Make every change of this unit durable at once."""
        await self._unit.commit()
