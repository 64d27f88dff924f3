"""Entities and value objects of authsvc (attrs, frozen).

Timestamps are timezone-aware UTC ``datetime`` values; adapters must round-trip them to the
microsecond.
"""

from __future__ import annotations

import enum
from datetime import datetime

import attrs

from domain.errors import FieldError, ValidationFailed

BCRYPT_MAX_PASSWORD_BYTES = 72
"""bcrypt reads at most 72 bytes of a password; longer ones are refused, never truncated."""


class Role(enum.StrEnum):
    """A user's role within its organization, lowest to highest (docs/reference/accounts.md)."""

    VIEWER = "viewer"
    OPERATOR = "operator"
    ORG_ADMIN = "org_admin"
    SUPERADMIN = "superadmin"

    @property
    def rank(self) -> int:
        """0 for viewer up to 3 for superadmin."""
        return _RANKS[self]


_RANKS = {Role.VIEWER: 0, Role.OPERATOR: 1, Role.ORG_ADMIN: 2, Role.SUPERADMIN: 3}


@attrs.frozen
class User:
    """A registered user. ``email`` is normalized and lower-case; ``password_hash`` is bcrypt."""

    id: str
    email: str
    password_hash: str = attrs.field(repr=False)
    role: Role
    org_id: str
    created_at: datetime
    disabled: bool = False
    """A disabled user cannot log in (403 ``account_disabled``) and its bearer tokens are
    refused (docs/reference/accounts.md)."""
    email_verified: bool = False
    """Whether the user proved it owns ``email`` (docs/reference/accounts.md)."""
    mfa_enabled: bool = False
    """Whether logging in needs a second factor, a TOTP or recovery code
    (docs/reference/mfa-and-passkeys.md)."""
    passkeys: int = attrs.field(default=0, eq=False)
    """How many passkeys the user has (docs/reference/mfa-and-passkeys.md): read with the user,
    never written through it; not part of equality."""


USER_AGENT_MAX_LENGTH = 256
"""A session keeps at most this many characters of the login's ``User-Agent`` (
docs/reference/tokens-and-sessions.md)."""


@attrs.frozen
class Session:
    """A session: one refresh-token family, from a login to its end
    (docs/reference/tokens-and-sessions.md).

    ``id`` is the family id. ``created_at``: the login; ``last_used_at``: the latest rotation
    (the login until one happens); ``expires_at``: the absolute end (login +
    ``auth.session_max_age``), which rotation never extends. ``user_agent``: the login's
    ``User-Agent`` cut to ``USER_AGENT_MAX_LENGTH`` characters, or None; ``client_address``: the
    login's client address under the ``server.trusted_proxies`` rule, or None. Never a token.
    ``client_id``: the OAuth client whose authorization started it (a code exchange,
    docs/reference/oauth-and-oidc.md), or None for a session of the JSON API. ``sid``: for such
    a session, the ``sid`` of its ID tokens (the hosted login session it came from), which its
    back-channel logout token carries; None: the session's own ``id`` stands for itself.
    """

    id: str
    user_id: str
    created_at: datetime
    last_used_at: datetime
    expires_at: datetime
    user_agent: str | None = None
    client_address: str | None = None
    client_id: str | None = None
    sid: str | None = None


class SessionEndReason(enum.StrEnum):
    """Why a session ended (``SessionEnded.reason``, docs/reference/tokens-and-sessions.md and issue
    12): ``logout`` POST /logout; ``user`` the user ended it (DELETE /me/sessions...); ``admin`` an
    administrator ended it; ``reuse`` a rotated refresh token came back (RFC 9700 section 4.14.2);
    ``password`` the password changed; ``disabled`` the account was disabled; ``password_reset`` the
    password was reset by an emailed link (``docs/reference/accounts.md``); ``revoked`` the OAuth
    client revoked its refresh token (RFC 7009); ``replaced`` a newer login in the same browser
    ended the hosted session (docs/adr/0032-openid-connect-provider.md); ``email_proven`` the owner
    proved the email by its verification link, and the identities linked while it was unverified
    (who may have started the session) were removed (``docs/reference/federation.md``)."""

    LOGOUT = "logout"
    USER = "user"
    ADMIN = "admin"
    REUSE = "reuse"
    PASSWORD = "password"  # noqa: S105 - a reason's name, not a secret
    DISABLED = "disabled"
    PASSWORD_RESET = "password_reset"  # noqa: S105 - a reason's name, not a secret
    REVOKED = "revoked"
    REPLACED = "replaced"
    EMAIL_PROVEN = "email_proven"


class EmailTokenPurpose(enum.StrEnum):
    """What an email token proves (docs/reference/accounts.md): ``reset`` a password-reset link,
    ``verify`` an email-verification link, ``email_change`` the link to a new address that
    confirms the change to it."""

    RESET = "reset"
    VERIFY = "verify"
    EMAIL_CHANGE = "email_change"


@attrs.frozen
class EmailToken:
    """The stored form of a token sent by email (docs/reference/accounts.md): ``token_hash`` is the
    SHA-256 of the token, lower-case hex (64 chars) — the clear token exists only in the message.
    Single use; dead at ``expires_at``. ``new_email``: the address an ``email_change`` token
    moves the account to (None for the other purposes)."""

    token_hash: str
    user_id: str
    purpose: EmailTokenPurpose
    expires_at: datetime
    created_at: datetime
    new_email: str | None = None

    def is_expired(self, now: datetime) -> bool:
        """True when ``now`` is at or past ``expires_at``."""
        return now >= self.expires_at


MFA_CHALLENGE_MAX_FAILURES = 5
"""The wrong code that voids an ``mfa_token`` (docs/reference/mfa-and-passkeys.md): the fifth."""


@attrs.frozen
class TotpCredential:
    """A user's TOTP secret (RFC 6238; docs/reference/mfa-and-passkeys.md), as stored.

    ``sealed_secret``: the base32 secret encrypted with AES-GCM (never stored in clear).
    ``confirmed``: False for a pending enrolment, True once a code confirmed it (MFA on).
    ``last_step``: the newest time step (Unix time // 30) whose code was accepted, or None; a
    code of that step or an older one is refused (RFC 6238 section 5.2: accepted once).
    """

    user_id: str
    sealed_secret: bytes = attrs.field(repr=False)
    confirmed: bool
    last_step: int | None
    created_at: datetime


@attrs.frozen
class MfaChallenge:
    """The stored form of an ``mfa_token`` (docs/reference/mfa-and-passkeys.md): the second step of
    a login whose password was right. ``token_hash``: SHA-256 hex of the opaque token; ``failures``:
    wrong codes so far (the ``MFA_CHALLENGE_MAX_FAILURES``-th voids it); single use; dead at
    ``expires_at``. ``first_factor``: what the first step was — ``password`` or ``federated``
    (another provider's login; the second step's ``amr`` then starts with ``fed``, RFC 8176)."""

    token_hash: str
    user_id: str
    expires_at: datetime
    created_at: datetime
    failures: int = 0
    first_factor: str = "password"

    def is_expired(self, now: datetime) -> bool:
        """True when ``now`` is at or past ``expires_at``."""
        return now >= self.expires_at


@attrs.frozen
class Group:
    """A named group of users inside one organization; ``name`` is unique per ``org_id``."""

    id: str
    name: str
    org_id: str
    created_at: datetime


@attrs.frozen
class GroupSummary:
    """A group with its number of members, as listed and returned by the API."""

    group: Group
    member_count: int


@attrs.frozen
class RefreshToken:
    """The stored form of an opaque refresh token (RFC 6749 section 1.5; RFC 9700 section 4.14).

    ``token_hash``: SHA-256 of the token, lower-case hex (64 chars) — the clear token is never
    stored. ``family_id``: one family per login (a session); every rotation stays in it.
    ``expires_at``: this token's own expiry (idle limit, capped by ``session_expires_at``).
    ``session_expires_at``: the family's absolute end, counted from the login; rotation never
    extends it.
    """

    token_hash: str
    user_id: str
    family_id: str
    expires_at: datetime
    session_expires_at: datetime
    created_at: datetime

    def is_expired(self, now: datetime) -> bool:
        """True when ``now`` is at or past ``expires_at``."""
        return now >= self.expires_at


def check_password_policy(password: str, min_length: int, field: str = "password") -> None:
    """Enforce the password policy of docs/reference/tokens-and-sessions.md.

    At least ``min_length`` characters and at most 72 bytes in UTF-8 (bcrypt's limit).
    Raises ``ValidationFailed`` naming ``field`` and the reason.
    """
    if len(password) < min_length:
        raise ValidationFailed([FieldError(field, f"must be at least {min_length} characters")])
    if len(password.encode("utf-8")) > BCRYPT_MAX_PASSWORD_BYTES:
        raise ValidationFailed(
            [FieldError(field, f"must be at most {BCRYPT_MAX_PASSWORD_BYTES} bytes in UTF-8")]
        )
