"""The PostgreSQL repositories (users, groups) and the unit of work holding them with the token
and session stores of ``adapters.persistence.postgres.tokens``."""

# Only module constants (column lists) are interpolated into SQL; values are always bound.
# ruff: noqa: S608

from __future__ import annotations

from datetime import datetime

import asyncpg

from adapters.persistence import _columns as cols
from adapters.persistence._rows import require_aware
from adapters.persistence.postgres.audit import PostgresAuditLog
from adapters.persistence.postgres.clients import PostgresClientRepo
from adapters.persistence.postgres.email_tokens import PostgresEmailTokenStore
from adapters.persistence.postgres.mfa import PostgresMfaStore
from adapters.persistence.postgres.oidc import (
    PostgresAuthorizationCodeStore,
    PostgresConsentStore,
    PostgresHostedSessionStore,
)
from adapters.persistence.postgres.passkeys import PostgresPasskeyRepo
from adapters.persistence.postgres.session import (
    _Session,
    _SqlQueries,
    _summary,
    _user,
)
from adapters.persistence.postgres.tokens import PostgresSessionStore, PostgresTokenStore
from application.ports import GroupRepo, UnitOfWork, UserRepo
from domain.errors import (
    Conflict,
    EmailTaken,
    NotFound,
)
from domain.model import Group, GroupSummary, Role, User


class PostgresUserRepo(_SqlQueries, UserRepo):
    """``UserRepo`` in the unit's transaction. Emails are stored lower-case (unique index)."""

    async def add(self, user: User) -> None:
        """Insert. Raises ``EmailTaken`` (email exists) or ``Conflict`` (id exists)."""
        email = user.email.lower()
        n = await self._run(
            f"INSERT INTO users ({cols.USERS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
            " ON CONFLICT DO NOTHING",
            user.id,
            email,
            user.password_hash,
            user.role.value,
            user.org_id,
            require_aware(user.created_at),
            user.disabled,
            user.email_verified,
            user.mfa_enabled,
        )
        if n == 0:
            if await self._one("SELECT 1 FROM users WHERE email = $1", email) is not None:
                raise EmailTaken()
            raise Conflict(f"user id {user.id} exists")

    async def get(self, user_id: str) -> User | None:
        """The user with this id, or None."""
        row = await self._one(f"SELECT {cols.USER_READ} FROM users WHERE id = $1", user_id)
        return None if row is None else _user(row)

    async def get_with_groups(self, user_id: str) -> tuple[User, list[str]] | None:
        """The user and the sorted ids of its groups (one statement), or None."""
        rows = await self._all(cols.USER_WITH_GROUPS.format(param="$1"), user_id)
        if not rows:
            return None
        return _user(tuple(rows[0])[:-1]), sorted(r[-1] for r in rows if r[-1] is not None)

    async def get_by_email(self, email: str) -> User | None:
        """The user with this email (compared lower-case), or None."""
        row = await self._one(f"SELECT {cols.USER_READ} FROM users WHERE email = $1", email.lower())
        return None if row is None else _user(row)

    async def update(self, user: User) -> None:
        """Replace the user with the same id. Raises ``NotFound`` or ``EmailTaken``."""
        try:
            n = await self._run_guarded(
                "UPDATE users SET email = $1, password_hash = $2, role = $3, org_id = $4,"
                " disabled = $5, email_verified = $6, mfa_enabled = $7 WHERE id = $8",
                user.email.lower(),
                user.password_hash,
                user.role.value,
                user.org_id,
                user.disabled,
                user.email_verified,
                user.mfa_enabled,
                user.id,
            )
        except asyncpg.UniqueViolationError:
            raise EmailTaken() from None
        if n == 0:
            raise NotFound(f"user {user.id} not found")

    async def list_page(self, org_id: str | None, after: str | None, limit: int) -> list[User]:
        """Up to ``limit`` users with ``id > after`` ordered by id, of ``org_id`` (None = all)."""
        rows = await self._all(
            f"SELECT {cols.USER_READ} FROM users WHERE ($1::text IS NULL OR org_id = $1)"
            " AND ($2::text IS NULL OR id > $2) ORDER BY id LIMIT $3",
            org_id,
            after,
            max(0, limit),
        )
        return [_user(r) for r in rows]

    async def count_by_role(self, role: Role) -> int:
        """How many enabled users hold ``role``."""
        row = await self._one(
            "SELECT count(*) FROM users WHERE role = $1 AND NOT disabled", role.value
        )
        return 0 if row is None else int(row[0])

    async def delete(self, user_id: str) -> bool:
        """Delete the user; its sessions, tokens and memberships go by ``ON DELETE CASCADE``."""
        return await self._run("DELETE FROM users WHERE id = $1", user_id) > 0


class PostgresGroupRepo(_SqlQueries, GroupRepo):
    """``GroupRepo`` in the unit's transaction. Names are unique per organization (exact)."""

    async def add(self, group: Group) -> None:
        """Insert. Raises ``Conflict`` on a duplicate name in the org or a duplicate id."""
        n = await self._run(
            "INSERT INTO groups (id, name, org_id, created_at) VALUES ($1, $2, $3, $4)"
            " ON CONFLICT DO NOTHING",
            group.id,
            group.name,
            group.org_id,
            require_aware(group.created_at),
        )
        if n == 0:
            raise Conflict(f"group {group.name!r} or id {group.id} exists in {group.org_id!r}")

    async def get(self, group_id: str) -> GroupSummary | None:
        """The group with its member count, or None."""
        row = await self._one(f"{cols.GROUP_SUMMARY} WHERE g.id = $1", group_id)
        return None if row is None else _summary(row)

    async def rename(self, group_id: str, name: str) -> None:
        """Rename. Raises ``NotFound``, or ``Conflict`` on a duplicate name in the org."""
        try:
            n = await self._run_guarded("UPDATE groups SET name = $1 WHERE id = $2", name, group_id)
        except asyncpg.UniqueViolationError:
            raise Conflict(f"group {name!r} exists in this organization") from None
        if n == 0:
            raise NotFound(f"group {group_id} not found")

    async def delete(self, group_id: str) -> bool:
        """Delete the group and (by cascade) its memberships; False if it did not exist."""
        return await self._run("DELETE FROM groups WHERE id = $1", group_id) > 0

    async def list_page(
        self, org_id: str | None, after: str | None, limit: int
    ) -> list[GroupSummary]:
        """Up to ``limit`` groups with ``id > after`` ordered by id, of ``org_id`` (None = all)."""
        rows = await self._all(
            f"{cols.GROUP_SUMMARY} WHERE ($1::text IS NULL OR g.org_id = $1)"
            " AND ($2::text IS NULL OR g.id > $2) ORDER BY g.id LIMIT $3",
            org_id,
            after,
            max(0, limit),
        )
        return [_summary(r) for r in rows]

    async def add_member(self, group_id: str, user_id: str, now: datetime) -> bool:
        """Add a membership (idempotent); True if new. Raises ``NotFound`` for an unknown
        group or user."""
        try:
            n = await self._run_guarded(
                "INSERT INTO group_members (group_id, user_id, created_at)"
                " VALUES ($1, $2, $3) ON CONFLICT (group_id, user_id) DO NOTHING",
                group_id,
                user_id,
                require_aware(now),
            )
        except asyncpg.ForeignKeyViolationError:
            raise NotFound(f"group {group_id} or user {user_id} not found") from None
        return n > 0

    async def remove_member(self, group_id: str, user_id: str) -> bool:
        """Remove a membership; True if it existed."""
        n = await self._run(
            "DELETE FROM group_members WHERE group_id = $1 AND user_id = $2", group_id, user_id
        )
        return n > 0

    async def members(self, group_id: str) -> list[User]:
        """The group's members ordered by id (empty for an unknown group)."""
        rows = await self._all(
            f"SELECT {cols.MEMBERS} FROM group_members m JOIN users u ON u.id = m.user_id"
            " WHERE m.group_id = $1 ORDER BY u.id",
            group_id,
        )
        return [_user(r) for r in rows]

    async def groups_of(self, user_id: str) -> list[str]:
        """Sorted ids of the groups ``user_id`` belongs to."""
        rows = await self._all(
            "SELECT group_id FROM group_members WHERE user_id = $1 ORDER BY group_id", user_id
        )
        return [r[0] for r in rows]

    async def remove_user_from_org_groups(self, user_id: str, org_id: str) -> int:
        """Remove the user from every group of ``org_id``; returns how many memberships went."""
        return await self._run(
            "DELETE FROM group_members WHERE user_id = $1"
            " AND group_id IN (SELECT id FROM groups WHERE org_id = $2)",
            user_id,
            org_id,
        )


class PostgresUnitOfWork(UnitOfWork):
    """``UnitOfWork``: one transaction on one pooled connection (begun at the first statement).

    ``commit()`` commits the changes so far; the next statement begins the next transaction:
    the unit goes on, and later changes need another ``commit()``. Raises ``StorageFault`` when
    the connection is lost during the commit (the outcome is then unknown).
    """

    def __init__(self, session: _Session) -> None:
        self._session = session
        self.users = PostgresUserRepo(session)
        self.tokens = PostgresTokenStore(session)
        self.sessions = PostgresSessionStore(session)
        self.groups = PostgresGroupRepo(session)
        self.email_tokens = PostgresEmailTokenStore(session)
        self.mfa = PostgresMfaStore(session)
        self.audit = PostgresAuditLog(session)
        self.clients = PostgresClientRepo(session)
        self.passkeys = PostgresPasskeyRepo(session)
        self.codes = PostgresAuthorizationCodeStore(session)
        self.consents = PostgresConsentStore(session)
        self.hosted_sessions = PostgresHostedSessionStore(session)

    async def commit(self) -> None:
        """Make every change of this unit durable at once."""
        await self._session.commit()
