"""Users by email prefix (docs/reference/console.md: the admin console's user search).

The same listing as GET /users (``domain.policy.list_scope`` with ``LIST_USERS``: viewer and
operator → ``Forbidden``; an org_admin sees its own organization, another's ``org_id`` →
``NotFound``; a superadmin every organization, or ``org_id``), narrowed to the users whose email
starts with a prefix. Emails are stored lower-cased, so the prefix is lower-cased too: the match
is case-insensitive, character for character (no wildcard).
"""

from __future__ import annotations

import attrs

from application.ports import Storage
from application.shared.checks import invalid
from application.shared.pagination import Page, check_limit, decode_cursor, page_of
from domain import policy
from domain.model import User
from domain.policy import Actor, Operation

__all__ = ["LISTING", "SearchUsers", "email_prefix"]

LISTING = "user-search"
"""The name inside this listing's cursors (a cursor of another listing is refused)."""
MAX_PREFIX = 320
"""The longest prefix (an email address's longest form)."""


def email_prefix(raw: str | None) -> str | None:
    """The search prefix: trimmed, lower-cased; None for an empty one (every user). Raises
    ``ValidationFailed`` naming ``email`` past ``MAX_PREFIX`` characters or with a control
    character."""
    if raw is None or not raw.strip():
        return None
    prefix = raw.strip().lower()
    if len(prefix) > MAX_PREFIX or any(ord(c) < 0x20 or c == "\x7f" for c in prefix):
        raise invalid("email", f"must be at most {MAX_PREFIX} printable characters")
    return prefix


@attrs.frozen
class SearchUsers:
    """``await search(actor, email=..., limit=..., cursor=..., org_id=...)`` → ``Page[User]``
    ordered by id, the users visible to ``actor`` whose email starts with ``email`` (any
    case). Raises ``Forbidden`` / ``NotFound`` as GET /users does, ``ValidationFailed`` for a
    bad ``limit``, ``cursor`` or ``email``."""

    _storage: Storage

    async def __call__(
        self,
        actor: Actor,
        *,
        email: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        org_id: str | None = None,
    ) -> Page[User]:
        """One page of the matching users after ``cursor``."""
        scope = policy.list_scope(actor, Operation.LIST_USERS, org_id)
        size = check_limit(limit)
        prefix = email_prefix(email)
        after = None if cursor is None else decode_cursor(LISTING, cursor)
        async with self._storage.begin() as uow:
            rows = await uow.users.list_page(scope, after, size + 1, prefix)
        return page_of(rows, size, LISTING, lambda user: user.id)
