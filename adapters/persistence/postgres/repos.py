"""The PostgreSQL repositories (users, groups) and the unit of work holding them with the token
and session stores of ``adapters.persistence.postgres.tokens``."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from adapters.persistence.postgres.audit import PostgresAuditLog
from adapters.persistence.postgres.clients import PostgresClientRepo
from adapters.persistence.postgres.email_tokens import PostgresEmailTokenStore
from adapters.persistence.postgres.identities import PostgresFederatedIdentityRepo
from adapters.persistence.postgres.mfa import PostgresMfaStore
from adapters.persistence.postgres.oidc import (
    PostgresAuthorizationCodeStore,
    PostgresConsentStore,
    PostgresHostedSessionStore,
)
from adapters.persistence.postgres.passkeys import PostgresPasskeyRepo
from adapters.persistence.postgres.rows import summary_row, user_row
from adapters.persistence.postgres.session import SKIP_CONFLICT, PooledSession, SqlQueries
from adapters.persistence.postgres.tokens import PostgresSessionStore, PostgresTokenStore
from adapters.persistence.sql import groups, users
from adapters.persistence.sql.paging import keyset_args
from adapters.persistence.times import require_aware
from application.ports import GroupRepo, UnitOfWork, UserRepo
from domain.errors import Conflict, EmailTaken, NotFound
from domain.model import Group, GroupSummary, Role, User


class PostgresUserRepo(SqlQueries, UserRepo):
    """``UserRepo`` in the unit's transaction. Emails are stored lower-case (unique index)."""

    async def add(self, user: User) -> None:
        """Insert. Raises ``EmailTaken`` (email exists) or ``Conflict`` (id exists)."""
        email = user.email.lower()
        n = await self._run(
            users.INSERT + SKIP_CONFLICT,
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
            if await self._one(users.EMAIL_EXISTS, email) is not None:
                raise EmailTaken()
            raise Conflict(f"user id {user.id} exists")

    async def get(self, user_id: str) -> User | None:
        """The user with this id, or None."""
        row = await self._one(users.BY_ID, user_id)
        return None if row is None else user_row(row)

    async def get_with_groups(self, user_id: str) -> tuple[User, list[str]] | None:
        """The user and the sorted ids of its groups (one statement), or None."""
        rows = await self._all(users.WITH_GROUPS, user_id)
        if not rows:
            return None
        return user_row(tuple(rows[0])[:-1]), sorted(r[-1] for r in rows if r[-1] is not None)

    async def get_by_email(self, email: str) -> User | None:
        """The user with this email (compared lower-case), or None."""
        row = await self._one(users.BY_EMAIL, email.lower())
        return None if row is None else user_row(row)

    async def update(self, user: User) -> None:
        """Replace the user with the same id. Raises ``NotFound`` or ``EmailTaken``."""
        try:
            n = await self._run_guarded(
                users.UPDATE,
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

    async def list_page(
        self, org_id: str | None, after: str | None, limit: int, email_prefix: str | None = None
    ) -> list[User]:
        """Up to ``limit`` users with ``id > after`` ordered by id, of ``org_id`` (None = all),
        whose email starts with ``email_prefix`` (lower-case; None = any)."""
        statement = users.page(
            by_org=org_id is not None, after=after is not None, by_prefix=email_prefix is not None
        )
        rows = await self._all(statement, *keyset_args(org_id, after, limit, email_prefix))
        return [user_row(r) for r in rows]

    async def count(self, org_id: str | None) -> int:
        """How many users ``org_id`` holds (None: every organization)."""
        row = await self._one(users.COUNT, org_id)
        return 0 if row is None else int(row[0])

    async def count_by_role(self, role: Role) -> int:
        """How many enabled users hold ``role``."""
        row = await self._one(users.COUNT_ENABLED_WITH_ROLE, role.value)
        return 0 if row is None else int(row[0])

    async def delete(self, user_id: str) -> bool:
        """Delete the user; its sessions, tokens and memberships go by ``ON DELETE CASCADE``."""
        return await self._run(users.DELETE, user_id) > 0


class PostgresGroupRepo(SqlQueries, GroupRepo):
    """``GroupRepo`` in the unit's transaction. Names are unique per organization (exact)."""

    async def add(self, group: Group) -> None:
        """Insert. Raises ``Conflict`` on a duplicate name in the org or a duplicate id."""
        n = await self._run(
            groups.INSERT + SKIP_CONFLICT,
            group.id,
            group.name,
            group.org_id,
            require_aware(group.created_at),
        )
        if n == 0:
            raise Conflict(f"group {group.name!r} or id {group.id} exists in {group.org_id!r}")

    async def get(self, group_id: str) -> GroupSummary | None:
        """The group with its member count, or None."""
        row = await self._one(groups.BY_ID, group_id)
        return None if row is None else summary_row(row)

    async def rename(self, group_id: str, name: str) -> None:
        """Rename. Raises ``NotFound``, or ``Conflict`` on a duplicate name in the org."""
        try:
            n = await self._run_guarded(groups.RENAME, name, group_id)
        except asyncpg.UniqueViolationError:
            raise Conflict(f"group {name!r} exists in this organization") from None
        if n == 0:
            raise NotFound(f"group {group_id} not found")

    async def delete(self, group_id: str) -> bool:
        """Delete the group and (by cascade) its memberships; False if it did not exist."""
        return await self._run(groups.DELETE, group_id) > 0

    async def list_page(
        self, org_id: str | None, after: str | None, limit: int
    ) -> list[GroupSummary]:
        """Up to ``limit`` groups with ``id > after`` ordered by id, of ``org_id`` (None = all)."""
        rows = await self._all(
            groups.page(by_org=org_id is not None, after=after is not None),
            *keyset_args(org_id, after, limit),
        )
        return [summary_row(r) for r in rows]

    async def add_member(self, group_id: str, user_id: str, now: datetime) -> bool:
        """Add a membership (idempotent); True if new. Raises ``NotFound`` for an unknown
        group or user."""
        try:
            n = await self._run_guarded(groups.ADD_MEMBER, group_id, user_id, require_aware(now))
        except asyncpg.ForeignKeyViolationError:
            raise NotFound(f"group {group_id} or user {user_id} not found") from None
        return n > 0

    async def remove_member(self, group_id: str, user_id: str) -> bool:
        """Remove a membership; True if it existed."""
        return await self._run(groups.REMOVE_MEMBER, group_id, user_id) > 0

    async def members(self, group_id: str) -> list[User]:
        """The group's members ordered by id (empty for an unknown group)."""
        rows = await self._all(groups.MEMBERS, group_id)
        return [user_row(r) for r in rows]

    async def groups_of(self, user_id: str) -> list[str]:
        """Sorted ids of the groups ``user_id`` belongs to."""
        rows = await self._all(groups.GROUPS_OF, user_id)
        return [r[0] for r in rows]

    async def remove_user_from_org_groups(self, user_id: str, org_id: str) -> int:
        """Remove the user from every group of ``org_id``; returns how many memberships went."""
        return await self._run(groups.LEAVE_ORG, user_id, org_id)


class PostgresUnitOfWork(UnitOfWork):
    """``UnitOfWork``: one transaction on one pooled connection (begun at the first statement).

    ``commit()`` commits the changes so far; the next statement begins the next transaction:
    the unit goes on, and later changes need another ``commit()``. Raises ``StorageFault`` when
    the connection is lost during the commit (the outcome is then unknown).
    """

    def __init__(self, session: PooledSession) -> None:
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
        self.identities = PostgresFederatedIdentityRepo(session)

    async def commit(self) -> None:
        """Make every change of this unit durable at once."""
        await self._session.commit()
