"""SQLite rows of the users, sessions, refresh tokens and groups tables read into domain objects
(times stored as integer microseconds since the epoch), and the constraint a driver error names."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from adapters.persistence.times import from_micros, to_micros
from domain.model import Group, GroupSummary, RefreshToken, Role, Session, User


def user_row(row: Iterable[Any]) -> User:
    """A ``User`` from a row of ``cols.USER_READ``."""
    id_, email, password_hash, role, org_id, created_at, disabled, verified, mfa, keys = row
    return User(
        id_,
        email,
        password_hash,
        Role(role),
        org_id,
        from_micros(created_at),
        bool(disabled),
        bool(verified),
        bool(mfa),
        int(keys),
    )


def session_row(row: Iterable[Any]) -> Session:
    """A ``Session`` from a row of ``cols.SESSIONS``."""
    id_, user_id, created_at, last_used_at, expires_at, user_agent, client_address, client = row
    return Session(
        id_,
        user_id,
        from_micros(created_at),
        from_micros(last_used_at),
        from_micros(expires_at),
        user_agent,
        client_address,
        client,
    )


def token_row(row: Iterable[Any]) -> RefreshToken:
    """A ``RefreshToken`` from a row of ``cols.TOKENS``."""
    token_hash, user_id, family_id, expires_at, session_expires_at, created_at = row
    return RefreshToken(
        token_hash,
        user_id,
        family_id,
        from_micros(expires_at),
        from_micros(session_expires_at),
        from_micros(created_at),
    )


def token_params(t: RefreshToken) -> tuple[Any, ...]:
    """The values of ``cols.TOKENS`` for ``t``."""
    return (
        t.token_hash,
        t.user_id,
        t.family_id,
        to_micros(t.expires_at),
        to_micros(t.session_expires_at),
        to_micros(t.created_at),
    )


def summary_row(row: Iterable[Any]) -> GroupSummary:
    """A ``GroupSummary`` from a row of ``cols.GROUP_SUMMARY``."""
    id_, name, org_id, created_at, count = row
    return GroupSummary(Group(id_, name, org_id, from_micros(created_at)), int(count))


def is_foreign_key(exc: sqlite3.IntegrityError) -> bool:
    """Whether a constraint error is a foreign key's (a row it names does not exist)."""
    return "FOREIGN KEY" in str(exc)
