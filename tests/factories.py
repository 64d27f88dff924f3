"""Builders of test data shared by the suites: domain objects with unique ids and microsecond
times (``Make``, from ``T0``), records of a ``LoginAttempts`` (``record``, ``counted``), and the
use cases' collaborators built the way the use-case tests need them (``make_reauth``)."""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

from adapters.crypto.bcrypt_hasher import BcryptHasher
from adapters.crypto.jwt_signer import JwtSigner
from adapters.events.inprocess import InProcessEventBus
from adapters.persistence.memory import MemoryLoginAttempts, MemoryStorage
from adapters.webauthn.py_webauthn import PyWebAuthn
from application.passkeys.reauth import PasskeyProof
from application.passkeys.settings import WebAuthnSettings
from application.ports import LoginAttempts, Storage
from application.sessions.tokens import SessionRotation, TokenIssuer
from application.shared.reauth import Reauthentication
from application.shared.settings import AuthSettings, Live
from application.shared.throttle import LoginThrottle
from domain.model import Group, RefreshToken, Role, Session, User
from tests.fakes import FakeClock

T0 = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
"""A reference time with microseconds, to check that adapters round-trip them."""


StorageFactory = Callable[[], Awaitable[Storage]]
"""Opens another ``Storage`` over the same data (see ``store``)."""


class Make:
    """Builders of domain objects with unique ids and microsecond timestamps."""

    def __init__(self) -> None:
        self._n = 0

    def _next(self) -> int:
        self._n += 1
        return self._n

    def user(
        self,
        id: str | None = None,
        email: str | None = None,
        role: Role = Role.VIEWER,
        org_id: str = "org-a",
    ) -> User:
        """A user; ``id`` defaults to ``u<n>`` and ``email`` to ``user<n>@example.com``."""
        n = self._next()
        return User(
            id=id or f"u{n:04d}",
            email=email or f"user{n}@example.com",
            password_hash="$2b$04$" + "x" * 53,
            role=role,
            org_id=org_id,
            created_at=T0 + timedelta(microseconds=n),
        )

    def token(
        self,
        user_id: str,
        family_id: str = "fam-1",
        expires_at: datetime | None = None,
        token_hash: str | None = None,
    ) -> RefreshToken:
        """A refresh token record of ``user_id`` (expires one hour after ``T0`` by default)."""
        return RefreshToken(
            token_hash=token_hash or secrets.token_hex(32),
            user_id=user_id,
            family_id=family_id,
            expires_at=expires_at or T0 + timedelta(hours=1, microseconds=7),
            session_expires_at=T0 + timedelta(days=90, microseconds=9),
            created_at=T0,
        )

    def session(
        self,
        user_id: str,
        id: str | None = None,
        created_at: datetime = T0,
        expires_at: datetime | None = None,
        user_agent: str | None = "agent/1.0",
    ) -> Session:
        """A session of ``user_id`` (ends 90 days after ``T0`` by default); ``id`` defaults to
        ``fam-<n>``."""
        n = self._next()
        return Session(
            id=id or f"fam-{n}",
            user_id=user_id,
            created_at=created_at,
            last_used_at=created_at,
            expires_at=expires_at or T0 + timedelta(days=90, microseconds=9),
            user_agent=user_agent,
            client_address="192.0.2.7",
        )

    def group(self, id: str | None = None, name: str | None = None, org_id: str = "org-a") -> Group:
        """A group; ``id`` defaults to ``g<n>`` and ``name`` to ``group <n>``."""
        n = self._next()
        return Group(
            id=id or f"g{n:04d}",
            name=name or f"group {n}",
            org_id=org_id,
            created_at=T0 + timedelta(microseconds=n),
        )


async def counted(attempts: LoginAttempts, key: str, since: datetime) -> list[datetime]:
    """The records of ``key`` at or after ``since``, oldest first, read through
    ``LoginAttempts.claim`` with a limit of 0 (which records nothing)."""
    return list((await attempts.claim(key, since, since, 0)).counted)


async def record(attempts: LoginAttempts, key: str, at: datetime) -> None:
    """One record of ``key`` at ``at``: a claim whose limit no test reaches."""
    assert (await attempts.claim(key, at, at, 1_000_000)).admitted


def make_reauth(
    storage: MemoryStorage, hasher: BcryptHasher, clock: FakeClock, settings: Live[AuthSettings]
) -> Reauthentication:
    """The fresh-proof checks (docs/reference/mfa-and-passkeys.md) over ``storage``, with a throttle
    of its own."""
    throttle = LoginThrottle(MemoryLoginAttempts(), clock, settings)
    passkeys = PasskeyProof(storage, PyWebAuthn(), clock, settings, Live(WebAuthnSettings()))
    return Reauthentication(hasher, throttle, passkeys)


def make_tokens(
    storage: MemoryStorage,
    signer: JwtSigner,
    bus: InProcessEventBus,
    clock: FakeClock,
    settings: Live[AuthSettings],
) -> tuple[TokenIssuer, SessionRotation]:
    """The token issuer and the session rotation the container injects into the login use
    cases (docs/reference/tokens-and-sessions.md), over ``storage``."""
    issuer = TokenIssuer(signer, clock, settings)
    return issuer, SessionRotation(storage, issuer, bus, clock, settings)
