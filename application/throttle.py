"""Failed-login throttling (contract section 2): per email *and* client address, sliding window."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import attrs

from application.ports import Clock, LoginAttempts
from application.settings import AuthSettings, Live
from domain.errors import RateLimited


@attrs.frozen
class LoginThrottle:
    """After ``auth.login_max_failures`` failures for one email from one client address within
    ``auth.login_failure_window`` seconds, further logins for that pair are refused until the
    oldest counted failure leaves the window; a success resets the count.

    Keying by email *and* address means an attacker elsewhere cannot lock the real user out.
    Keys are SHA-256 digests, so the attempts store never holds an email in clear.
    """

    _attempts: LoginAttempts
    _clock: Clock
    _settings: Live[AuthSettings]

    @staticmethod
    def key(email: str, client: str) -> str:
        """The opaque key of one (email, client address) pair: SHA-256 hex."""
        return hashlib.sha256(f"{email}\x00{client}".encode()).hexdigest()

    async def check(self, email: str, client: str) -> None:
        """Raise ``RateLimited`` (with ``retry_after`` seconds) if this pair is throttled now."""
        cfg = self._settings.current
        now = self._clock.now()
        window = timedelta(seconds=cfg.login_failure_window)
        failures = await self._attempts.failures_since(self.key(email, client), now - window)
        if len(failures) >= cfg.login_max_failures:
            # The pair may try again once enough failures have left the window.
            release = failures[len(failures) - cfg.login_max_failures] + window
            raise RateLimited(retry_after=int((release - now).total_seconds() + 0.999))

    async def failed(self, email: str, client: str) -> None:
        """Count one failed login for this pair."""
        await self._attempts.record_failure(self.key(email, client), self._clock.now())

    async def succeeded(self, email: str, client: str) -> None:
        """Forget this pair's failures."""
        await self._attempts.reset(self.key(email, client))
