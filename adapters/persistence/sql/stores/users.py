"""The SQL user and group repositories (docs/reference/accounts.md): tables ``users``,
``groups`` and ``group_members``."""

from __future__ import annotations

from datetime import datetime

from adapters.persistence.rows.users import summary_row, user_row
from adapters.persistence.sql import groups, users
from adapters.persistence.sql.paging import keyset_args
from adapters.persistence.sql.queries import SKIP_CONFLICT, SqlStore
from application.ports import GroupRepo, UserRepo
from domain.errors import Conflict, EmailTaken, NotFound
from domain.model import Group, GroupSummary, Role, User


class SqlUserRepo(SqlStore, UserRepo):
    """``UserRepo`` in the unit's transaction. Emails are stored lower-case (unique index)."""

    async def add(self, user: User) -> None:
        """Insert. Raises ``EmailTaken`` (email exists) or ``Conflict`` (id exists)."""
        email, flag = user.email.lower(), self._d.bool_to_db
        n = await self._q.execute(
            users.INSERT + SKIP_CONFLICT,
            (
                user.id, email, user.password_hash, user.role.value, user.org_id,
                self._d.to_db(user.created_at), flag(user.disabled), flag(user.email_verified),
                flag(user.mfa_enabled),
            ),
        )  # fmt: skip
        if n == 0:
            if await self._q.one(users.EMAIL_EXISTS, (email,)) is not None:
                raise EmailTaken()
            raise Conflict(f"user id {user.id} exists")

    async def get(self, user_id: str) -> User | None:
        """The user with this id, or None."""
        row = await self._q.one(users.BY_ID, (user_id,))
        return None if row is None else user_row(row, self._d.from_db)

    async def get_with_groups(self, user_id: str) -> tuple[User, list[str]] | None:
        """The user and the sorted ids of its groups (one statement), or None."""
        rows = await self._q.all(users.WITH_GROUPS, (user_id,))
        if not rows:
            return None
        user = user_row(tuple(rows[0])[:-1], self._d.from_db)
        return user, sorted(r[-1] for r in rows if r[-1] is not None)

    async def get_by_email(self, email: str) -> User | None:
        """The user with this email (compared lower-case), or None."""
        row = await self._q.one(users.BY_EMAIL, (email.lower(),))
        return None if row is None else user_row(row, self._d.from_db)

    async def update(self, user: User) -> None:
        """Replace the user with the same id. Raises ``NotFound`` or ``EmailTaken``."""
        flag = self._d.bool_to_db
        try:
            n = await self._q.execute(
                users.UPDATE,
                (
                    user.email.lower(), user.password_hash, user.role.value, user.org_id,
                    flag(user.disabled), flag(user.email_verified), flag(user.mfa_enabled),
                    user.id,
                ),
                guarded=True,
            )  # fmt: skip
        except Exception as exc:
            if not self._d.is_unique_violation(exc):
                raise
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
        rows = await self._q.all(statement, keyset_args(org_id, after, limit, email_prefix))
        return [user_row(r, self._d.from_db) for r in rows]

    async def count(self, org_id: str | None) -> int:
        """How many users ``org_id`` holds (None: every organization)."""
        row = await self._q.one(users.COUNT, (org_id,))
        return 0 if row is None else int(row[0])

    async def count_by_role(self, role: Role) -> int:
        """How many enabled users hold ``role``."""
        row = await self._q.one(users.COUNT_ENABLED_WITH_ROLE, (role.value,))
        return 0 if row is None else int(row[0])

    async def delete(self, user_id: str) -> bool:
        """Delete the user; its sessions, tokens and memberships go by ``ON DELETE CASCADE``."""
        return await self._q.execute(users.DELETE, (user_id,)) > 0


class SqlGroupRepo(SqlStore, GroupRepo):
    """``GroupRepo`` in the unit's transaction. Names are unique per organization (exact)."""

    async def add(self, group: Group) -> None:
        """Insert. Raises ``Conflict`` on a duplicate name in the org or a duplicate id."""
        n = await self._q.execute(
            groups.INSERT + SKIP_CONFLICT,
            (group.id, group.name, group.org_id, self._d.to_db(group.created_at)),
        )
        if n == 0:
            raise Conflict(f"group {group.name!r} or id {group.id} exists in {group.org_id!r}")

    async def get(self, group_id: str) -> GroupSummary | None:
        """The group with its member count, or None."""
        row = await self._q.one(groups.BY_ID, (group_id,))
        return None if row is None else summary_row(row, self._d.from_db)

    async def rename(self, group_id: str, name: str) -> None:
        """Rename. Raises ``NotFound``, or ``Conflict`` on a duplicate name in the org."""
        try:
            n = await self._q.execute(groups.RENAME, (name, group_id), guarded=True)
        except Exception as exc:
            if not self._d.is_unique_violation(exc):
                raise
            raise Conflict(f"group {name!r} exists in this organization") from None
        if n == 0:
            raise NotFound(f"group {group_id} not found")

    async def delete(self, group_id: str) -> bool:
        """Delete the group and (by cascade) its memberships; False if it did not exist."""
        return await self._q.execute(groups.DELETE, (group_id,)) > 0

    async def list_page(
        self, org_id: str | None, after: str | None, limit: int
    ) -> list[GroupSummary]:
        """Up to ``limit`` groups with ``id > after`` ordered by id, of ``org_id`` (None = all)."""
        rows = await self._q.all(
            groups.page(by_org=org_id is not None, after=after is not None),
            keyset_args(org_id, after, limit),
        )
        return [summary_row(r, self._d.from_db) for r in rows]

    async def add_member(self, group_id: str, user_id: str, now: datetime) -> bool:
        """Add a membership (idempotent); True if new. Raises ``NotFound`` for an unknown
        group or user."""
        try:
            n = await self._q.execute(
                groups.ADD_MEMBER, (group_id, user_id, self._d.to_db(now)), guarded=True
            )
        except Exception as exc:
            if not self._d.is_foreign_key_violation(exc):
                raise
            raise NotFound(f"group {group_id} or user {user_id} not found") from None
        return n > 0

    async def remove_member(self, group_id: str, user_id: str) -> bool:
        """Remove a membership; True if it existed."""
        return await self._q.execute(groups.REMOVE_MEMBER, (group_id, user_id)) > 0

    async def members(self, group_id: str) -> list[User]:
        """The group's members ordered by id (empty for an unknown group)."""
        rows = await self._q.all(groups.MEMBERS, (group_id,))
        return [user_row(r, self._d.from_db) for r in rows]

    async def groups_of(self, user_id: str) -> list[str]:
        """Sorted ids of the groups ``user_id`` belongs to."""
        rows = await self._q.all(groups.GROUPS_OF, (user_id,))
        return [r[0] for r in rows]

    async def remove_user_from_org_groups(self, user_id: str, org_id: str) -> int:
        """Remove the user from every group of ``org_id``; returns how many memberships went."""
        return await self._q.execute(groups.LEAVE_ORG, (user_id, org_id))
