"""Events published on the EventBus (contract section 6). Payloads carry ids, never secrets."""

from __future__ import annotations

import attrs


@attrs.frozen
class Event:
    """Base of every event."""


@attrs.frozen
class ConfigChanged(Event):
    """The configuration was re-read; ``changed`` lists the prefixes that differ (e.g. ``auth``)."""

    changed: tuple[str, ...]


@attrs.frozen
class UserRegistered(Event):
    """A user registered."""

    user_id: str
    org_id: str


@attrs.frozen
class LoginSucceeded(Event):
    """A login succeeded and started the session ``family_id``."""

    user_id: str
    family_id: str


@attrs.frozen
class LoginFailed(Event):
    """A login failed. ``user_id`` is None for an unknown email (and for a throttled login);
    the email itself is not carried. ``reason``: ``"wrong_password"``, ``"unknown_email"`` or
    ``"rate_limited"`` (refused by the throttle before any check)."""

    user_id: str | None
    client: str
    reason: str


@attrs.frozen
class AccessTokenIssued(Event):
    """An access token was issued (after the commit that stored its refresh token).

    ``grant`` is ``"login"`` or ``"refresh"``; ``algorithm`` the JWS ``alg`` it was signed with
    (``RS256``, ``ML-DSA-65``, ``ML-DSA-87``). Carries ids only, never the tokens.
    """

    user_id: str
    family_id: str
    algorithm: str
    grant: str


@attrs.frozen
class RefreshFailed(Event):
    """A refresh was refused for a token that is unknown, revoked or expired (``reason``:
    ``"unknown"`` or ``"expired"``); ``user_id`` is known only for an expired token. A reused
    token is reported by ``RefreshTokenReuseDetected`` instead."""

    reason: str
    user_id: str | None = None


@attrs.frozen
class RefreshTokenReuseDetected(Event):
    """An already-rotated refresh token was presented again (RFC 9700 section 4.14.2).

    Every live token of ``family_id`` was revoked; ``token_hash_prefix`` is the first 8 hex chars.
    """

    user_id: str
    family_id: str
    token_hash_prefix: str
    revoked: int


@attrs.frozen
class PasswordChanged(Event):
    """A user changed its password; ``revoked`` refresh tokens were deleted with it."""

    user_id: str
    revoked: int


@attrs.frozen
class RoleChanged(Event):
    """``actor_id`` changed the role of ``user_id`` from ``old_role`` to ``new_role``."""

    user_id: str
    actor_id: str
    old_role: str
    new_role: str


@attrs.frozen
class GroupMembershipChanged(Event):
    """``user_id`` was ``added`` to or removed from ``group_id`` by ``actor_id``."""

    group_id: str
    user_id: str
    actor_id: str
    added: bool
