"""Ports of the accounts: users, refresh tokens, sessions, email tokens.
See ``application.ports`` for the conventions every port follows."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from domain.model import (
    EmailToken,
    EmailTokenPurpose,
    RefreshToken,
    Role,
    Session,
    User,
)


class UserRepo(Protocol):
    """Users, inside one unit of work. Emails are stored and compared lower-case."""

    async def add(self, user: User) -> None:
        """Insert ``user``.

        Raises ``EmailTaken`` if the email (case-insensitive) exists, ``Conflict`` if the id
        exists, ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def get(self, user_id: str) -> User | None:
        """The user with this id, or None.

        Raises ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def get_with_groups(self, user_id: str) -> tuple[User, list[str]] | None:
        """The user with this id and the sorted ids of its groups, read by one statement (one
        consistent snapshot, one round trip), or None. Raises ``ValidationFailed`` if the id
        cannot be looked up by the backend."""
        ...

    async def get_by_email(self, email: str) -> User | None:
        """The user with this email (compared lower-case), or None.

        Raises ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def update(self, user: User) -> None:
        """Replace the stored user with the same id (email, hash, role, org, disabled,
        email_verified).

        Raises ``NotFound`` when no user has that id, ``EmailTaken`` when another user has the
        email, ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def list_page(
        self, org_id: str | None, after: str | None, limit: int, email_prefix: str | None = None
    ) -> list[User]:
        """Keyset page: up to ``limit`` users with ``id > after`` (all if None), ordered by id.

        ``org_id`` None means every organization; ``email_prefix`` (lower-case, as emails are
        stored) keeps the users whose email starts with it, character for character (no
        wildcard). Raises ``ValidationFailed`` if a value cannot be stored or looked up by the
        backend.
        """
        ...

    async def count(self, org_id: str | None) -> int:
        """How many users (enabled or not) ``org_id`` holds; None: every organization."""
        ...

    async def count_by_role(self, role: Role) -> int:
        """How many enabled users hold ``role`` (across organizations; disabled ones do not
        count: the last-superadmin rule is about who can still act)."""
        ...

    async def delete(self, user_id: str) -> bool:
        """Delete the user and everything hanging off it (sessions, refresh tokens and rotated
        records, memberships); False if there was no such user.

        Raises ``ValidationFailed`` if the id cannot be looked up by the backend.
        """
        ...


class TokenStore(Protocol):
    """Refresh tokens (stored by SHA-256 hash only) and the hashes of rotated ones."""

    async def add(self, token: RefreshToken) -> None:
        """Store a new live refresh token.

        Raises ``Conflict`` if the hash exists, ``NotFound`` if its user does not,
        ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def take(self, token_hash: str) -> RefreshToken | None:
        """Atomically delete and return the live token with this hash, or None.

        Of concurrent ``take`` calls for one hash (in any process), at most one gets the token
        (e.g. ``DELETE ... RETURNING``). Raises ``ValidationFailed`` if a value cannot be stored or
        looked up by the backend.
        """
        ...

    async def find(self, token_hash: str) -> RefreshToken | None:
        """The live token with this hash, or None (no change).

        Raises ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def remember_rotated(self, token: RefreshToken, rotated_at: datetime) -> None:
        """Remember a rotated token's hash (with its family) until its ``expires_at``, rotated at
        ``rotated_at`` and reused 0 times so far; replaces an earlier record of the same hash.

        Raises ``NotFound`` if its user does not exist, ``ValidationFailed`` if a value cannot be
        stored or looked up by the backend.
        """
        ...

    async def claim_reuse(
        self, token_hash: str, rotated_since: datetime, max_reuses: int
    ) -> RefreshToken | None:
        """The reuse interval's compare-and-set (docs/reference/tokens-and-sessions.md): if the
        rotated record of ``token_hash`` was rotated at or after ``rotated_since`` and has been
        reused fewer than ``max_reuses`` times, count one more reuse and return it; else None and no
        change.

        Atomic in the database (``UPDATE ... WHERE reuse_count < max RETURNING``): of
        concurrent claims in any process, at most ``max_reuses`` ever succeed for one hash.
        Raises ``ValidationFailed`` if a value cannot be looked up by the backend.
        """
        ...

    async def find_rotated(self, token_hash: str) -> RefreshToken | None:
        """The remembered rotated token with this hash, or None.

        Raises ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete live and rotated records whose ``expires_at`` <= ``now``; returns the count.
        At most ``limit`` rows of each table (all with None): housekeeping deletes in
        bounded batches, each in its own transaction.
        """
        ...


class SessionStore(Protocol):
    """Sessions (docs/reference/tokens-and-sessions.md): one record per refresh-token family, with
    the login's user agent and client address. ``last_used_at`` follows each token stored for the
    family (``TokenStore.add``) without a statement of its own. Ending a session deletes its record
    and its live tokens in the unit of work; its rotated records stay for reuse detection."""

    async def add(self, session: Session) -> None:
        """Store a new session (before its first token).

        Raises ``Conflict`` if the id exists, ``NotFound`` if its user does not,
        ``ValidationFailed`` if a value cannot be stored by the backend.
        """
        ...

    async def get(self, session_id: str) -> Session | None:
        """The session with this id (ended ones are gone), or None.

        Raises ``ValidationFailed`` if the id cannot be looked up by the backend.
        """
        ...

    async def touch(self, session_id: str, at: datetime) -> None:
        """A use of the session at ``at`` that stores no token (a page of its hosted session,
        docs/reference/tokens-and-sessions.md): ``last_used_at`` moves on to ``at`` when ``at``
        is later; nothing for an unknown or ended session.

        Raises ``ValidationFailed`` if the id cannot be looked up by the backend.
        """
        ...

    async def list_live(self, user_id: str, now: datetime) -> list[Session]:
        """The user's live sessions, newest first (``created_at`` descending, then id): those
        whose ``expires_at`` is after ``now`` and that hold a live refresh token unexpired at
        ``now``, or a hosted session (``HostedSessionStore``) live at ``now``. Raises
        ``ValidationFailed`` if the id cannot be looked up by the backend."""
        ...

    async def of_user(self, user_id: str) -> list[Session]:
        """Every record of the user, live or not (an ended one is gone), oldest first
        (``created_at``, then id): what ends with them, read before they end (back-channel
        logout, docs/reference/oauth-and-oidc.md). Raises ``ValidationFailed`` if the id cannot
        be looked up by the backend."""
        ...

    async def count_live(self, org_id: str | None, now: datetime) -> int:
        """How many sessions live at ``now`` (the rule of ``list_live``) belong to users of
        ``org_id`` (None: every organization)."""
        ...

    async def end(self, session_id: str) -> int:
        """End the session: delete its record and its live refresh tokens; returns how many
        tokens were deleted (0 for an unknown or ended session).

        Raises ``ValidationFailed`` if the id cannot be looked up by the backend.
        """
        ...

    async def end_all(self, user_id: str, keep: str | None = None) -> list[str]:
        """End every session of the user (records and live tokens) but ``keep`` (a session id,
        e.g. the hosted session of the page that changed the password; None: every one);
        returns the ids of the sessions ended, sorted. Raises ``ValidationFailed`` if the id
        cannot be looked up."""
        ...

    async def end_for_client(self, user_id: str, client_id: str) -> list[str]:
        """End the user's sessions started by ``client_id`` (``Session.client_id``): records,
        live tokens and any hosted session riding on them; returns the ids ended, sorted (a
        consent revoked, docs/reference/oauth-and-oidc.md). Raises ``ValidationFailed`` if an id
        cannot be looked up by the backend."""
        ...

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete the records of sessions past their ``expires_at`` or without a live token
        or a live hosted session (idle past ``auth.refresh_token_ttl``, or whose last token was
        purged); returns how many.
        At most ``limit`` rows of each table (all with None): housekeeping deletes in
        bounded batches, each in its own transaction.
        """
        ...


class EmailTokenStore(Protocol):
    """Tokens sent by email (docs/reference/accounts.md), stored by SHA-256 hash only, inside one
    unit of work: password-reset and email-verification links."""

    async def add(self, token: EmailToken) -> None:
        """Store a new token.

        Raises ``Conflict`` if the hash exists, ``NotFound`` if its user does not,
        ``ValidationFailed`` if a value cannot be stored by the backend.
        """
        ...

    async def find(self, token_hash: str, purpose: EmailTokenPurpose) -> EmailToken | None:
        """The stored token with this hash and purpose (expired or not), or None; no change.

        Raises ``ValidationFailed`` if the hash cannot be looked up by the backend.
        """
        ...

    async def take(self, token_hash: str, purpose: EmailTokenPurpose) -> EmailToken | None:
        """Atomically delete and return the token with this hash and purpose, or None: of
        concurrent ``take`` calls for one hash (in any process) at most one gets it (single use).
        Raises ``ValidationFailed`` if the hash cannot be looked up by the backend."""
        ...

    async def void(self, user_id: str, purpose: EmailTokenPurpose) -> int:
        """Delete every token of ``user_id`` with this purpose; returns how many went.

        Raises ``ValidationFailed`` if the id cannot be looked up by the backend.
        """
        ...

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete the tokens whose ``expires_at`` <= ``now``; returns how many went.
        At most ``limit`` rows of each table (all with None): housekeeping deletes in
        bounded batches, each in its own transaction.
        """
        ...
