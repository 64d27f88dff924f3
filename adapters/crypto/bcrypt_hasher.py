"""Password hashing with bcrypt: the ``Hasher`` port (docs/reference/tokens-and-sessions.md).

bcrypt hashes at most 72 bytes of UTF-8; longer passwords are refused by the password policy
before they reach this adapter, and bcrypt 5 raises ``ValueError`` rather than truncating.
Passwords are never logged.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import bcrypt

from application.ports import Hasher
from application.shared.settings import AuthSettings, Live

T = TypeVar("T")
_BCRYPT_HASH = re.compile(r"\$2[abxy]?\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}")
"""A modular-crypt bcrypt hash (60 characters): anything else is checked as no hash at all."""


class BcryptHasher(Hasher):
    """``Hasher`` over bcrypt at cost ``auth.current.bcrypt_rounds`` (log2 rounds, 4..31).

    Both operations run on a pool of its own with one thread per core (``threads``, default
    ``os.cpu_count()``), as a cost-12 hash takes ~0.2-0.3 s of CPU: every core hashes, logins
    queue there rather than in the default executor shared with everything else, and the event
    loop keeps a core's share for the requests that need no hash (liveness, /me).
    ``verify(pw, None)`` checks ``pw`` against a dummy hash of the current cost (made once per
    cost and cached) and returns False, so an unknown email costs the same time as a wrong
    password. ``bcrypt.checkpw`` compares in constant time.
    """

    def __init__(self, auth: Live[AuthSettings], threads: int | None = None) -> None:
        self._auth = auth
        self._dummy: dict[int, bytes] = {}
        self._pool = ThreadPoolExecutor(
            max_workers=threads or os.cpu_count() or 1, thread_name_prefix="bcrypt"
        )

    async def _run(self, work: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, work)

    async def hash(self, password: str) -> str:
        """A new salted ``$2b$`` hash (60 ASCII characters) of ``password`` at the current cost.

        Raises ``ValueError`` for a password over 72 UTF-8 bytes (bcrypt's limit).
        """
        rounds = self._auth.current.bcrypt_rounds
        data = password.encode("utf-8")
        salt = bcrypt.gensalt(rounds=rounds)
        hashed = await self._run(lambda: bcrypt.hashpw(data, salt))
        return hashed.decode("ascii")

    async def verify(self, password: str, password_hash: str | None) -> bool:
        """True iff ``password`` matches ``password_hash``; False for None, an empty or
        malformed hash (a user created by federation has none) or a password bcrypt cannot
        take (over 72 bytes), after spending one check's time: a hash that is not a bcrypt
        hash is checked against the dummy one, like an unknown email (OWASP Authentication
        Cheat Sheet, "Authentication Responses")."""
        data = password.encode("utf-8")
        if password_hash is None or not _BCRYPT_HASH.fullmatch(password_hash):
            rounds = self._auth.current.bcrypt_rounds
            await self._run(lambda: self._check(data, self._dummy_hash(rounds)))
            return False
        stored = password_hash.encode("ascii", "replace")
        return await self._run(lambda: self._check(data, stored))

    @staticmethod
    def _check(password: bytes, hashed: bytes) -> bool:
        try:
            return bcrypt.checkpw(password, hashed)
        except ValueError:  # malformed hash or password over 72 bytes
            return False

    def _dummy_hash(self, rounds: int) -> bytes:
        """The cached dummy hash of cost ``rounds`` (runs in the worker thread)."""
        dummy = self._dummy.get(rounds)
        if dummy is None:
            # A hash of a random secret nobody knows; made once per cost (it takes one hash's
            # time, so the very first unknown-email login is a little slower).
            dummy = bcrypt.hashpw(secrets.token_bytes(16).hex().encode(), bcrypt.gensalt(rounds))
            self._dummy[rounds] = dummy
        return dummy
