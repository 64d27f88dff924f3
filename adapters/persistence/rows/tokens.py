"""Rows of ``refresh_tokens``, ``rotated_refresh_tokens`` and ``sessions`` shared by the SQL
stores (SQLite, PostgreSQL): reading a row and the parameters of a write, with the dialect's
time codec (``Dialect.to_db``, ``Dialect.from_db``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from domain.model import RefreshToken, Session


def token_row(row: Iterable[Any], when: Callable[[Any], datetime]) -> RefreshToken:
    """A ``RefreshToken`` from a row of ``cols.TOKENS``; ``when`` converts a stored time."""
    token_hash, user_id, family_id, expires_at, session_expires_at, created_at = row
    return RefreshToken(
        token_hash, user_id, family_id, when(expires_at), when(session_expires_at),
        when(created_at),
    )  # fmt: skip


def token_params(t: RefreshToken, to: Callable[[datetime], Any]) -> tuple[Any, ...]:
    """The values of ``cols.TOKENS`` for ``t``; ``to`` converts a time to its stored form."""
    return (
        t.token_hash, t.user_id, t.family_id, to(t.expires_at), to(t.session_expires_at),
        to(t.created_at),
    )  # fmt: skip


def session_row(row: Iterable[Any], when: Callable[[Any], datetime]) -> Session:
    """A ``Session`` from a row of ``cols.SESSIONS``; ``when`` converts a stored time."""
    (id_, user_id, created_at, last_used_at, expires_at, user_agent, client_address, client,
     sid) = row  # fmt: skip
    return Session(
        id_, user_id, when(created_at), when(last_used_at), when(expires_at), user_agent,
        client_address, client, sid,
    )  # fmt: skip
