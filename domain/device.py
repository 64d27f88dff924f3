"""The device authorization grant (RFC 8628; docs/reference/oauth-and-oidc.md): a device without a
browser (a CLI, a TV) shows a short ``user_code``; the user enters it at ``/ui/device`` on another
device, signs in and approves; meanwhile the device polls the token endpoint with its
``device_code``.

Both codes are stored only as SHA-256 hashes. The user code has 8 characters of
``USER_CODE_ALPHABET`` (20 consonants: no vowels, so no words; no look-alike digits), about 34.6
bits (RFC 8628 §6.1): guessing is bounded by the per-address limits on wrong codes, and the grant
lives ``oidc.device_code_ttl`` seconds.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from enum import StrEnum

import attrs

__all__ = [
    "DEVICE_CODE_GRANT",
    "INTERVAL",
    "SLOW_DOWN_STEP",
    "USER_CODE_ALPHABET",
    "USER_CODE_LENGTH",
    "DeviceGrant",
    "DeviceStatus",
    "PollOutcome",
    "format_user_code",
    "new_user_code",
    "normalize_user_code",
    "poll_outcome",
]

DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
"""The token endpoint's ``grant_type`` of RFC 8628 §3.4, and the client field's grant name."""
USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ"
"""The characters of a user code (RFC 8628 §6.1's example alphabet)."""
USER_CODE_LENGTH = 8
"""Characters in a user code (without the hyphen shown in the middle)."""
INTERVAL = 5
"""Seconds a device waits between two polls at first (RFC 8628 §3.2 ``interval``)."""
SLOW_DOWN_STEP = 5
"""Seconds the interval grows by at each ``slow_down`` (RFC 8628 §3.5)."""
MAX_INTERVAL = 300
"""The interval never grows past this (seconds): a misbehaving device still gets its token."""
_SEPARATORS = str.maketrans("", "", "- \t")


class DeviceStatus(StrEnum):
    """Where a device grant is: waiting for the user, approved or denied by them, or its tokens
    issued (``used``: single use)."""

    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"
    USED = "used"


@attrs.frozen
class DeviceGrant:
    """One device authorization request (RFC 8628 §3.1–3.2).

    ``device_code_hash`` / ``user_code_hash``: SHA-256 hex of the codes (the user code in its
    normalized form, ``normalize_user_code``). ``client_id``: the client that asked;
    ``scopes``: the checked scopes asked for. ``created_at`` / ``expires_at``: aware UTC times
    (``expires_at - created_at`` = ``oidc.device_code_ttl`` s). ``interval``: seconds the device
    must wait between polls now; ``last_polled_at``: its last poll (None: never). ``status``:
    ``DeviceStatus``. Once decided: ``user_id``, ``session_id`` (the hosted login that decided:
    the ``sessions`` row whose end voids the approval), ``auth_time``, ``amr``, ``acr`` of that
    login, and ``decided_at``."""

    device_code_hash: str
    user_code_hash: str
    client_id: str
    scopes: tuple[str, ...]
    created_at: datetime
    expires_at: datetime
    interval: int = INTERVAL
    last_polled_at: datetime | None = None
    status: DeviceStatus = DeviceStatus.PENDING
    user_id: str | None = None
    session_id: str | None = None
    auth_time: datetime | None = None
    amr: tuple[str, ...] = ()
    acr: str | None = None
    decided_at: datetime | None = None

    def is_expired(self, now: datetime) -> bool:
        """Whether the grant is past its ``expires_at`` at ``now``."""
        return self.expires_at <= now


def new_user_code() -> str:
    """A fresh user code: ``USER_CODE_LENGTH`` characters drawn uniformly from
    ``USER_CODE_ALPHABET`` with ``secrets`` (normalized form, no hyphen)."""
    return "".join(secrets.choice(USER_CODE_ALPHABET) for _ in range(USER_CODE_LENGTH))


def format_user_code(code: str) -> str:
    """How a normalized user code is shown: ``XXXX-XXXX``."""
    half = len(code) // 2
    return f"{code[:half]}-{code[half:]}"


def normalize_user_code(text: str) -> str | None:
    """The normalized form of what a user typed (RFC 8628 §6.1): upper case, hyphens and spaces
    dropped; None unless that is exactly ``USER_CODE_LENGTH`` characters of
    ``USER_CODE_ALPHABET`` (so a malformed entry is refused without a lookup)."""
    if len(text) > 4 * USER_CODE_LENGTH:
        return None
    code = text.translate(_SEPARATORS).upper()
    if len(code) != USER_CODE_LENGTH or any(c not in USER_CODE_ALPHABET for c in code):
        return None
    return code


class PollOutcome(StrEnum):
    """The answer to one poll of the token endpoint (RFC 8628 §3.5): an error code, or
    ``ISSUE`` (approved: issue the tokens once)."""

    PENDING = "authorization_pending"
    SLOW_DOWN = "slow_down"
    DENIED = "access_denied"
    EXPIRED = "expired_token"
    USED = "invalid_grant"
    ISSUE = "issue"


def poll_outcome(grant: DeviceGrant, now: datetime) -> tuple[PollOutcome, int]:
    """What a poll at ``now`` gets, and the grant's interval afterwards (seconds).

    In order: an expired grant → ``expired_token``; a grant whose tokens were issued →
    ``invalid_grant``; a denied one → ``access_denied``; a poll sooner than ``interval`` seconds
    after the previous poll → ``slow_down`` and the interval grows by ``SLOW_DOWN_STEP``
    (capped at ``MAX_INTERVAL``); then ``authorization_pending`` while the user has not
    decided, else ``ISSUE``. The caller stores ``now`` as the last poll."""
    if grant.is_expired(now):
        return PollOutcome.EXPIRED, grant.interval
    if grant.status is DeviceStatus.USED:
        return PollOutcome.USED, grant.interval
    if grant.status is DeviceStatus.DENIED:
        return PollOutcome.DENIED, grant.interval
    last = grant.last_polled_at
    if last is not None and now < last + timedelta(seconds=grant.interval):
        return PollOutcome.SLOW_DOWN, min(grant.interval + SLOW_DOWN_STEP, MAX_INTERVAL)
    if grant.status is DeviceStatus.PENDING:
        return PollOutcome.PENDING, grant.interval
    return PollOutcome.ISSUE, grant.interval
