"""Ports: the Protocols the use cases depend on. Adapters implement them and nothing else.

Adapters translate their drivers' errors (sqlite3, asyncpg, OpenSSL ...) into the domain errors
named here before they cross the port. All times are timezone-aware UTC datetimes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any, Protocol, TypeVar

from application.events import Event
from domain.model import Group, GroupSummary, RefreshToken, Role, User

E = TypeVar("E", bound=Event)


class UserRepo(Protocol):
    """Users, inside one transaction."""

    async def add(self, user: User) -> None:
        """Insert ``user``. Raises ``EmailTaken`` if the email (case-insensitive) exists."""
        ...

    async def get(self, user_id: str) -> User | None:
        """The user with this id, or None."""
        ...

    async def get_by_email(self, email: str) -> User | None:
        """The user with this (already lower-cased) email, or None."""
        ...

    async def update(self, user: User) -> None:
        """Replace the stored user with the same id (email, hash, role, org).

        Raises ``NotFound`` when no user has that id.
        """
        ...

    async def list_page(self, org_id: str | None, after: str | None, limit: int) -> list[User]:
        """Keyset page: up to ``limit`` users with ``id > after`` (all if None), ordered by id.

        ``org_id`` None means every organization.
        """
        ...

    async def count_by_role(self, role: Role) -> int:
        """How many users hold ``role`` (across organizations)."""
        ...


class TokenStore(Protocol):
    """Refresh tokens (stored by SHA-256 hash only) and the hashes of rotated ones."""

    async def add(self, token: RefreshToken) -> None:
        """Store a new live refresh token."""
        ...

    async def take(self, token_hash: str) -> RefreshToken | None:
        """Atomically delete and return the live token with this hash, or None.

        Of concurrent ``take`` calls for one hash (in any process), at most one gets the token
        (e.g. ``DELETE ... RETURNING``).
        """
        ...

    async def find(self, token_hash: str) -> RefreshToken | None:
        """The live token with this hash, or None (no change)."""
        ...

    async def remember_rotated(self, token: RefreshToken) -> None:
        """Remember a rotated token's hash (with its family) until its ``expires_at``."""
        ...

    async def find_rotated(self, token_hash: str) -> RefreshToken | None:
        """The remembered rotated token with this hash, or None."""
        ...

    async def revoke_family(self, family_id: str) -> int:
        """Delete every live token of the family; returns how many were deleted."""
        ...

    async def revoke_user(self, user_id: str) -> int:
        """Delete every live token of the user; returns how many were deleted."""
        ...

    async def purge_expired(self, now: datetime) -> int:
        """Delete live and rotated records whose ``expires_at`` <= ``now``; returns the count."""
        ...


class GroupRepo(Protocol):
    """Groups and memberships, inside one transaction."""

    async def add(self, group: Group) -> None:
        """Insert. Raises ``Conflict`` if the org already has a group with this name."""
        ...

    async def get(self, group_id: str) -> GroupSummary | None:
        """The group with its member count, or None."""
        ...

    async def rename(self, group_id: str, name: str) -> None:
        """Rename. Raises ``NotFound``, or ``Conflict`` on a duplicate name in the org."""
        ...

    async def delete(self, group_id: str) -> bool:
        """Delete the group and its memberships; False if it did not exist."""
        ...

    async def list_page(
        self, org_id: str | None, after: str | None, limit: int
    ) -> list[GroupSummary]:
        """Keyset page of groups with ``id > after`` ordered by id; ``org_id`` None = all orgs."""
        ...

    async def add_member(self, group_id: str, user_id: str, now: datetime) -> bool:
        """Add a membership; idempotent. True if it was new."""
        ...

    async def remove_member(self, group_id: str, user_id: str) -> bool:
        """Remove a membership; True if it existed."""
        ...

    async def members(self, group_id: str) -> list[User]:
        """The group's members ordered by id."""
        ...

    async def groups_of(self, user_id: str) -> list[str]:
        """Ids of the groups ``user_id`` belongs to, sorted."""
        ...

    async def remove_user_from_org_groups(self, user_id: str, org_id: str) -> int:
        """Remove the user from every group of ``org_id``; returns how many memberships went."""
        ...


class Transaction(Protocol):
    """One unit of work: the repositories below share one database transaction.

    Leaving the ``UnitOfWork.begin()`` context without ``commit()`` (or by an exception) rolls back.
    """

    users: UserRepo
    tokens: TokenStore
    groups: GroupRepo

    async def commit(self) -> None:
        """Make every change of this unit durable at once."""
        ...


class UnitOfWork(Protocol):
    """A storage backend: opens transactions; has a lifetime (``open`` ... ``close``)."""

    def begin(self) -> AbstractAsyncContextManager[Transaction]:
        """Start a transaction (serialized with other writers as the backend requires)."""
        ...

    async def open(self) -> None:
        """Connect (pool, file) and apply pending migrations."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...

    async def ping(self) -> None:
        """Run a trivial query; raises on failure (used by the health indicator)."""
        ...


class Hasher(Protocol):
    """Password hashing (bcrypt). Work runs off the event loop."""

    async def hash(self, password: str) -> str:
        """A new salted hash of ``password`` at the configured cost."""
        ...

    async def verify(self, password: str, password_hash: str | None) -> bool:
        """Constant-time check of ``password`` against ``password_hash``.

        With ``password_hash`` None it spends one check against a dummy hash of the same cost and
        returns False, so an unknown email costs the same time as a wrong password.
        """
        ...


class Signer(Protocol):
    """Signs and verifies JWT access tokens (RFC 7519, RFC 7515; RS256 or ML-DSA per RFC 9964)."""

    @property
    def algorithm(self) -> str:
        """The JWS ``alg`` new tokens are signed with (``RS256``, ``ML-DSA-65``, ``ML-DSA-87``)."""
        ...

    async def sign(self, claims: Mapping[str, Any]) -> str:
        """A compact JWS over ``claims`` with header ``{alg, typ: "JWT", kid}``."""
        ...

    async def verify(
        self, token: str, *, issuer: str, audience: str, leeway: int
    ) -> dict[str, Any]:
        """The claims of a valid token; raises ``InvalidToken`` otherwise.

        Rejects ``alg: none``, any algorithm not of a key in the verification set, a missing or
        unknown ``kid``, a bad signature, expiry (with ``leeway`` seconds), a wrong ``iss``/``aud``,
        and tokens lacking any of ``sub, iat, exp, iss, aud, jti``.
        """
        ...

    def jwks(self) -> dict[str, Any]:
        """The JWK Set (RFC 7517) of every public key that may still verify a live token."""
        ...


EventHandler = Callable[[Any], Awaitable[None] | None]

EmailNormalizer = Callable[[str], str]
"""Checks an email's syntax and returns its canonical lower-case form; raises ``ValidationFailed``
naming the field ``email`` when the syntax is bad (contract section 2)."""


class EventBus(Protocol):
    """Publish/subscribe of application events. Subscribers' failures are logged, not raised."""

    async def publish(self, event: Event) -> None:
        """Deliver ``event`` to every subscriber of its type (and of its base types)."""
        ...

    def subscribe(
        self, event_type: type[E], handler: Callable[[E], Awaitable[None] | None]
    ) -> None:
        """Call ``handler`` (sync or async) for every published instance of ``event_type``."""
        ...


class Clock(Protocol):
    """The source of time."""

    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...


class LoginAttempts(Protocol):
    """Failed-login records for throttling, keyed by an opaque string (email + client address)."""

    async def failures_since(self, key: str, since: datetime) -> list[datetime]:
        """Times of the failures recorded for ``key`` at or after ``since``, oldest first."""
        ...

    async def record_failure(self, key: str, at: datetime) -> None:
        """Record one failure for ``key``."""
        ...

    async def reset(self, key: str) -> None:
        """Forget every failure of ``key`` (after a successful login)."""
        ...


class HealthIndicator(Protocol):
    """A named check of one dependency; ``check()`` returns a dict (details) or a bool."""

    name: str

    def check(self) -> Mapping[str, Any] | bool | Awaitable[Mapping[str, Any] | bool]:
        """True / a details dict when healthy; False or an exception when not."""
        ...


__all__ = [
    "Clock",
    "EmailNormalizer",
    "EventBus",
    "EventHandler",
    "GroupRepo",
    "Hasher",
    "HealthIndicator",
    "LoginAttempts",
    "Signer",
    "TokenStore",
    "Transaction",
    "UnitOfWork",
    "UserRepo",
]
