"""PostgreSQL rows of the users, sessions, refresh tokens and groups tables read into domain
objects (times are ``timestamptz``)."""

from __future__ import annotations

from typing import Any

import asyncpg

from adapters.persistence.times import require_aware
from domain.model import Group, GroupSummary, RefreshToken, Role, Session, User


def user_row(r: asyncpg.Record) -> User:
    """A ``User`` from a row of ``cols.USER_READ``."""
    return User(r[0], r[1], r[2], Role(r[3]), r[4], r[5], r[6], r[7], r[8], int(r[9]))


def session_row(r: asyncpg.Record) -> Session:
    """A ``Session`` from a row of ``cols.SESSIONS``."""
    return Session(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7])


def token_row(r: asyncpg.Record) -> RefreshToken:
    """A ``RefreshToken`` from a row of ``cols.TOKENS``."""
    return RefreshToken(r[0], r[1], r[2], r[3], r[4], r[5])


def token_params(t: RefreshToken) -> tuple[Any, ...]:
    """The values of ``cols.TOKENS`` for ``t`` (aware times)."""
    for at in (t.expires_at, t.session_expires_at, t.created_at):
        require_aware(at)
    return (t.token_hash, t.user_id, t.family_id, t.expires_at, t.session_expires_at, t.created_at)


def summary_row(r: asyncpg.Record) -> GroupSummary:
    """A ``GroupSummary`` from a row of ``cols.GROUP_SUMMARY``."""
    return GroupSummary(Group(r[0], r[1], r[2], r[3]), int(r[4]))
