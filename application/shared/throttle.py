"""Failed-login throttling (docs/reference/tokens-and-sessions.md and
docs/reference/mfa-and-passkeys.md): per email *and* client address, sliding window, counted first
and decided after.

``attempt`` is the one to use before checking a secret: it records the attempt as a failure
and counts it in one atomic step of the store (``LoginAttempts.claim``), and refuses it
(``RateLimited``) when ``auth.login_max_failures`` are already counted in the window. So at
most that many secrets are *evaluated* per key and window, however many requests arrive at
once, over any number of workers or instances sharing the store. The caller then, once the
secret was checked:

- wrong: nothing more (the attempt already counts as the failure);
- right: ``succeeded`` (forget the key's failures), or ``release`` (forget only this attempt,
  e.g. a right password whose login waits for the second factor).
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

import attrs

from application.ports import AttemptClaim, Clock, LoginAttempts
from application.shared.settings import AuthSettings, Live
from domain.errors import RateLimited


@attrs.frozen
class Attempt:
    """One admitted attempt (``LoginThrottle.attempt``): its key (the digest) and the id of the
    record that counts it."""

    key: str
    attempt_id: int


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

    async def attempt(self, email: str, client: str) -> Attempt:
        """Count one attempt of this pair as a failure, atomically with the check that fewer
        than ``auth.login_max_failures`` were counted in the window
        (docs/reference/mfa-and-passkeys.md).

        Returns the ``Attempt`` (pass it to ``release`` if it turns out not to be a failure).
        Raises ``RateLimited`` (with ``retry_after`` seconds) if the pair is throttled now;
        then nothing was recorded. Raises ``StorageFault`` as the store does.
        """
        cfg = self._settings.current
        now = self._clock.now()
        window = timedelta(seconds=cfg.login_failure_window)
        key = self.key(email, client)
        claimed = await self._attempts.claim(key, now, now - window, cfg.login_max_failures)
        if claimed.attempt_id is None:
            raise RateLimited(retry_after=self._retry_after(claimed, window, now))
        return Attempt(key, claimed.attempt_id)

    def _retry_after(self, claimed: AttemptClaim, window: timedelta, now: datetime) -> int:
        """Whole seconds until enough counted failures leave the window for one more try."""
        limit = self._settings.current.login_max_failures
        counted = claimed.counted
        release = counted[max(len(counted) - limit, 0)] + window
        return max(int((release - now).total_seconds() + 0.999), 1)

    async def release(self, attempt: Attempt) -> None:
        """Forget one attempt (it was not a failure: e.g. the right password of a user whose
        login goes on to the second factor), keeping the pair's other failures."""
        await self._attempts.release(attempt.key, attempt.attempt_id)

    async def succeeded(self, email: str, client: str) -> None:
        """Forget this pair's failures."""
        await self._attempts.reset(self.key(email, client))
