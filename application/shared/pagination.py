"""Keyset pagination of the listings of docs/reference/accounts.md (users, groups).

Listings are keyset-paginated by id: ``limit`` 1..200 (default 50) and an opaque ``cursor``
(URL-safe base64 of a small JSON object naming the listing and the last id of the previous page).
A page holds rows with ``id > last id``, so rows inserted meanwhile never cause a duplicate or a
gap among the rows that existed when the walk began.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from typing import Generic, Protocol, TypeVar

import attrs

from application.ports import Storage, UnitOfWork
from application.shared.checks import invalid
from domain import policy
from domain.policy import Actor, Operation

__all__ = [
    "DEFAULT_PAGE_LIMIT",
    "MAX_PAGE_LIMIT",
    "KeysetRepo",
    "Listing",
    "Page",
    "check_limit",
    "decode_cursor",
    "encode_cursor",
    "page_of",
]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

DEFAULT_PAGE_LIMIT = 50
"""``limit`` when none is given (docs/reference/accounts.md)."""
MAX_PAGE_LIMIT = 200
"""The largest ``limit`` accepted (docs/reference/accounts.md)."""
_MAX_CURSOR_LENGTH = 1024


@attrs.frozen
class Page(Generic[T]):
    """One page of a keyset listing: ``items`` in id order and ``next_cursor`` (None on the last
    page). Rendered as ``{"items": [...], "next_cursor": str | null}``
    (docs/reference/accounts.md)."""

    items: tuple[T, ...]
    next_cursor: str | None


def check_limit(limit: int | None) -> int:
    """The page size: ``DEFAULT_PAGE_LIMIT`` for None. Raises ``ValidationFailed`` naming
    ``limit`` for anything but an integer in 1..``MAX_PAGE_LIMIT``."""
    if limit is None:
        return DEFAULT_PAGE_LIMIT
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise invalid("limit", "must be an integer")
    if not 1 <= limit <= MAX_PAGE_LIMIT:
        raise invalid("limit", f"must be between 1 and {MAX_PAGE_LIMIT}")
    return limit


def encode_cursor(listing: str, after: str) -> str:
    """The opaque cursor resuming ``listing`` (``users`` or ``groups``) after id ``after``."""
    raw = json.dumps({"l": listing, "after": after}, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def decode_cursor(listing: str, cursor: str, field: str = "cursor") -> str:
    """The last id carried by a cursor of ``listing`` made by ``encode_cursor``.

    Raises ``ValidationFailed`` (422) naming ``field`` for anything that is not such a cursor
    (bad base64 or JSON, another listing's cursor, too long).
    """
    error = invalid(field, "is not a valid cursor")
    if not isinstance(cursor, str) or not cursor or len(cursor) > _MAX_CURSOR_LENGTH:
        raise error
    try:
        padded = cursor.encode("ascii") + b"=" * (-len(cursor) % 4)
        data = json.loads(base64.b64decode(padded, altchars=b"-_", validate=True))
    except (ValueError, binascii.Error):
        raise error from None
    if not isinstance(data, dict) or data.get("l") != listing:
        raise error
    after = data.get("after")
    if not isinstance(after, str) or not after:
        raise error
    return after


def page_of(rows: Sequence[T], size: int, listing: str, key: Callable[[T], str]) -> Page[T]:
    """The page of ``listing`` made of ``rows`` — read with a limit of ``size + 1``, so one
    row more than a page says that another page follows: then ``next_cursor`` resumes after the
    ``key`` of the page's last row."""
    if len(rows) > size:
        items = tuple(rows[:size])
        return Page(items, encode_cursor(listing, key(items[-1])))
    return Page(tuple(rows), None)


class KeysetRepo(Protocol[T_co]):
    """A repository that pages its rows by id (``UserRepo``, ``GroupRepo``)."""

    async def list_page(self, org_id: str | None, after: str | None, limit: int) -> Sequence[T_co]:
        """Up to ``limit`` rows with ``id > after`` (all if None) of ``org_id`` (None: every
        organization), ordered by id."""
        ...


@attrs.frozen
class Listing(Generic[T]):
    """A keyset listing use case (GET /users, GET /groups): ``await listing(actor, limit=...,
    cursor=..., org_id=...)`` returns one ``Page[T]`` ordered by id.

    In order: the organization filter comes from ``domain.policy.list_scope`` (``Forbidden`` for a
    role that may not list, ``NotFound`` for another organization than its own, but for a
    superadmin or the operator); then ``limit`` and ``cursor`` are checked (``ValidationFailed``
    naming the field); then one read in a unit of work fetches one row more than a page, which
    tells whether a ``next_cursor`` follows.

    A subclass passes the listing's ``name`` (inside its cursors: a cursor of another listing is
    refused), the ``operation`` the policy rules on, the ``repo`` of a unit of work to read and the
    ``key`` (id) each row is ordered and resumed by.
    """

    _storage: Storage
    _name: str
    _operation: Operation
    _repo: Callable[[UnitOfWork], KeysetRepo[T]]
    _key: Callable[[T], str]

    async def __call__(
        self,
        actor: Actor,
        *,
        limit: int | None = None,
        cursor: str | None = None,
        org_id: str | None = None,
    ) -> Page[T]:
        """One page of the rows visible to ``actor``, after ``cursor``, of ``org_id``."""
        scope = policy.list_scope(actor, self._operation, org_id)
        size = check_limit(limit)
        after = None if cursor is None else decode_cursor(self._name, cursor)
        async with self._storage.begin() as uow:
            rows = await self._repo(uow).list_page(scope, after, size + 1)
        return page_of(rows, size, self._name, self._key)
