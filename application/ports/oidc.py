"""Ports of the OpenID Connect provider (docs/reference/oauth-and-oidc.md): authorization codes,
consents, hosted sessions. Reached through the unit of work as ``uow.codes``, ``uow.consents`` and
``uow.hosted_sessions``. See ``application.ports`` for the conventions every port follows (aware UTC
times, ``StorageFault``)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

import attrs

from domain.oidc import AuthorizationCode, Consent, HostedSession


@attrs.frozen
class TakenCode:
    """What ``AuthorizationCodeStore.take`` found: the ``code`` as stored after the take, and
    ``first_use`` — True only for the one take that marked it used (RFC 9700 §4.2.4: any other
    take is a reuse, whatever the clock says)."""

    code: AuthorizationCode
    first_use: bool


class AuthorizationCodeStore(Protocol):
    """Authorization codes, stored by the SHA-256 hex of the clear code only."""

    async def add(self, code: AuthorizationCode) -> None:
        """Store a new code (``used_at`` and ``family_id`` as given, normally None).

        Raises ``Conflict`` if the hash exists, ``NotFound`` if its user does not,
        ``ValidationFailed`` if a value cannot be stored by the backend, ``ValueError`` if a
        time is naive.
        """
        ...

    async def take(self, code_hash: str, now: datetime) -> TakenCode | None:
        """The code with this hash, marking it used at ``now`` in the same atomic step.

        Unused: ``TakenCode(code with used_at = now, first_use=True)`` (stored too). Already
        used: the code unchanged (``used_at`` being the first use) with ``first_use=False``, so
        the caller detects a reuse — even one at the same instant — and revokes ``family_id``
        (RFC 9700 §4.2.4). Unknown (or purged): None. Of concurrent takes of one hash in any
        process, exactly one gets ``first_use`` (``UPDATE ... WHERE used_at IS NULL``).
        Expiry is not checked here: the caller compares ``expires_at`` with ``now``. Raises
        ``ValidationFailed`` if the hash cannot be looked up by the backend.
        """
        ...

    async def set_family(self, code_hash: str, family_id: str) -> None:
        """Record the token family (``sessions`` row id) issued from the code; nothing if the
        code is gone."""
        ...

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete codes whose ``expires_at`` <= ``now`` (used or not); returns how many. At
        most ``limit`` (all with None): housekeeping deletes in bounded batches.
        """
        ...


class ConsentStore(Protocol):
    """The scopes each user allowed each client (one record per user and client)."""

    async def get(self, user_id: str, client_id: str) -> Consent | None:
        """The user's consent to the client, or None."""
        ...

    async def grant(self, consent: Consent) -> None:
        """Upsert: the stored scopes become the union of the stored ones (in their order) and
        ``consent.scopes`` (new ones appended); ``granted_at`` becomes ``consent.granted_at``.

        Raises ``NotFound`` if the user or the client does not exist, ``ValidationFailed`` if a
        value cannot be stored by the backend, ``ValueError`` if the time is naive.
        """
        ...

    async def list_for_user(self, user_id: str) -> list[Consent]:
        """The user's consents, newest grant first (``granted_at`` descending, then
        ``client_id``)."""
        ...

    async def revoke(self, user_id: str, client_id: str) -> bool:
        """Delete the user's consent to the client; False if there was none. The caller ends
        the client's sessions of the user too (``SessionStore.end_for_client``)."""
        ...


class HostedSessionStore(Protocol):
    """Hosted sessions (the provider's login cookie), stored by the SHA-256 hex of the cookie
    value. Each rides on a ``sessions`` row (``session_id``): ending that row by any path
    (``SessionStore.end``, ``end_all``, ``end_for_client``, the user's deletion) ends it."""

    async def add(self, hosted: HostedSession) -> None:
        """Store a new hosted session; its ``sessions`` row must exist already.

        Raises ``Conflict`` if the hash exists, ``NotFound`` if its user or its session row
        does not, ``ValueError`` if a time is naive.
        """
        ...

    async def find(self, id_hash: str, now: datetime) -> HostedSession | None:
        """The live hosted session with this hash, or None: None too when ``now`` is at or
        past its ``idle_expires_at`` or ``expires_at``, or its ``sessions`` row has ended."""
        ...

    async def touch(self, id_hash: str, idle_expires_at: datetime) -> None:
        """Move the idle end on to ``idle_expires_at`` (never past ``expires_at``: the stored
        value is the earlier of the two); nothing if the hash is unknown."""
        ...

    async def reauthenticated(self, id_hash: str, auth_time: datetime) -> None:
        """The user proved itself again in this hosted session (the account pages'
        re-authentication, docs/reference/accounts.md): its ``auth_time`` becomes
        ``auth_time``; nothing if the hash is unknown. Raises ``ValueError`` if it is naive."""
        ...

    async def end(self, id_hash: str) -> str | None:
        """End the hosted session AND its ``sessions`` row (with the row's live refresh
        tokens); returns the ``session_id``, or None if the hash was unknown."""
        ...

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete hosted sessions past their idle or absolute end (their ``sessions`` rows are
        purged by ``SessionStore.purge_expired``); returns how many. At most ``limit``."""
        ...
