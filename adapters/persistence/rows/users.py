"""Rows of ``users`` and ``groups`` shared by the SQL stores (SQLite, PostgreSQL): reading a
row, with the dialect's time codec (``Dialect.from_db``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from domain.model import Group, GroupSummary, Role, User


def user_row(row: Iterable[Any], when: Callable[[Any], datetime]) -> User:
    """A ``User`` from a row of ``cols.USER_READ``; ``when`` converts a stored time."""
    id_, email, password_hash, role, org_id, created_at, disabled, verified, mfa, keys = row
    return User(
        id_, email, password_hash, Role(role), org_id, when(created_at), bool(disabled),
        bool(verified), bool(mfa), int(keys),
    )  # fmt: skip


def summary_row(row: Iterable[Any], when: Callable[[Any], datetime]) -> GroupSummary:
    """A ``GroupSummary`` from a row of ``cols.GROUP_SUMMARY``; ``when`` converts a stored
    time."""
    id_, name, org_id, created_at, count = row
    return GroupSummary(Group(id_, name, org_id, when(created_at)), int(count))
