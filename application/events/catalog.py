"""Events published on the EventBus (docs/reference/operations.md). Payloads carry ids, never
secrets."""

from __future__ import annotations

import attrs


@attrs.frozen
class Event:
    """Base of every event."""


@attrs.frozen
class SharedEvent(Event):
    """An event every instance of the service must hear (docs/reference/operations.md, "Many
    instances"): a broker bus (``events.backend`` = ``nats`` | ``redis``) also sends it to the
    other instances, which deliver it to their own subscribers.

    ``origin`` is None on the instance that published it; on a receiving instance it is the
    publisher's instance id (random per process), so a subscriber can tell "changed here" from
    "changed on a peer" and a received event is never sent on again.
    """

    origin: str | None = attrs.field(default=None, kw_only=True)


LOCAL_ONLY = "local_only"
"""``attrs`` metadata key of a ``SharedEvent`` field that stays on the publishing instance: a
broker bus never sends it (a peer hears the field's default)."""


@attrs.frozen
class ConfigChanged(SharedEvent):
    """The configuration was re-read; ``changed`` lists the prefixes that differ (e.g. ``auth``).
    ``actor_id``: the user who called ``POST /actuator/refresh`` (None for a refresh without
    one); local only, for this instance's ``config.changed`` audit row
    (docs/reference/operations.md).

    Received from a peer (``origin`` set), it makes this instance re-read its own configuration
    (all or nothing, like ``POST /actuator/refresh``)."""

    changed: tuple[str, ...]
    actor_id: str | None = attrs.field(default=None, kw_only=True, metadata={LOCAL_ONLY: True})


@attrs.frozen
class SigningKeysChanged(SharedEvent):
    """The shared signing keys changed (``reason``: ``"rotated"``, ``"retired"`` or
    ``"created"``); ``kids`` are the RFC 7638 key ids concerned — public ids, never key material.

    Received from a peer, it makes this instance re-read the key store at once instead of at its
    next poll."""

    kids: tuple[str, ...]
    reason: str


@attrs.frozen
class UserRegistered(Event):
    """A user registered."""

    user_id: str
    org_id: str


@attrs.frozen
class LoginSucceeded(Event):
    """A login succeeded and started the session ``family_id``; ``method``: ``password``,
    ``totp``, ``recovery_code`` (the second step) or ``passkey``; ``client_id``: the OAuth
    client whose sign-in brought the user to a hosted login page (docs/reference/oauth-and-oidc.md),
    if any."""

    user_id: str
    family_id: str
    method: str = "password"
    client_id: str | None = None
    provider: str | None = None
    """The identity provider of a ``federated`` login (docs/reference/federation.md), else None."""


@attrs.frozen
class LoginFailed(Event):
    """A login failed. ``user_id`` is None for an unknown email (and for a throttled login);
    the email itself is not carried. ``reason``: ``"wrong_password"``, ``"unknown_email"`` or
    ``"rate_limited"`` (refused by the throttle before any check), ``"invalid_passkey"``;
    ``method``: ``password`` or ``passkey``."""

    user_id: str | None
    client: str
    reason: str
    method: str = "password"


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
    """A user changed its password; ``revoked`` sessions (refresh-token families) ended with it."""

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
    """``user_id`` was ``added`` to or removed from ``group_id`` by ``actor_id``; ``org_id``:
    the group's organization (None: the user's)."""

    group_id: str
    user_id: str
    actor_id: str
    added: bool
    org_id: str | None = None


@attrs.frozen
class SessionEnded(Event):
    """The session ``session_id`` (a refresh-token family) of ``user_id`` ended: its refresh
    tokens fail from now on (docs/reference/tokens-and-sessions.md). ``reason`` is a
    ``SessionEndReason`` value: ``logout``, ``user``, ``admin``, ``reuse``, ``password``,
    ``disabled``, ``password_reset``, ``revoked`` or ``replaced``; ``actor_id`` is who ended it (the
    user itself, an administrator, ``"cli"``, the OAuth client that revoked its refresh token), None
    when nobody acted (reuse, logout by refresh token, a newer login in the browser)."""

    user_id: str
    session_id: str
    reason: str
    actor_id: str | None = None


@attrs.frozen
class UserDisabled(Event):
    """``actor_id`` disabled ``user_id``; its sessions ended with it
    (docs/reference/accounts.md)."""

    user_id: str
    actor_id: str


@attrs.frozen
class UserEnabled(Event):
    """``actor_id`` enabled ``user_id`` again (docs/reference/accounts.md)."""

    user_id: str
    actor_id: str


@attrs.frozen
class UserDeleted(Event):
    """``actor_id`` deleted ``user_id`` (``actor_id == user_id``: the user deleted itself) with
    its sessions, memberships and everything else hanging off it (docs/reference/accounts.md).
    ``org_id`` is the organization the user was in: its audit row and webhook messages carry it
    (docs/reference/webhooks.md), as nothing is left to look it up by afterwards."""

    user_id: str
    actor_id: str
    org_id: str


@attrs.frozen
class PasswordResetRequested(Event):
    """A password reset was asked for (POST /password/forgot, docs/reference/accounts.md):
    ``user_id`` is None for an email no enabled user has (no message was sent then); or an
    administrator sent the link (POST /users/{id}/password-reset): ``actor_id`` is the
    administrator (None: the anonymous /password/forgot). Never the email."""

    user_id: str | None
    client: str
    actor_id: str | None = None


@attrs.frozen
class PasswordReset(Event):
    """``user_id`` set a new password with an emailed reset link; ``revoked`` sessions ended
    with it and the email counts as verified (docs/reference/accounts.md)."""

    user_id: str
    revoked: int


@attrs.frozen
class EmailVerified(Event):
    """``user_id`` proved it owns its email with a verification link
    (docs/reference/accounts.md)."""

    user_id: str


@attrs.frozen
class EmailChangeRequested(Event):
    """``user_id`` asked to move its account to another address, with its password: a link was
    mailed there (docs/reference/accounts.md). Never the address."""

    user_id: str


@attrs.frozen
class EmailChanged(Event):
    """``user_id``'s email changed: the link mailed to the new address was opened
    (docs/reference/accounts.md); the old address is told. Never an address."""

    user_id: str


@attrs.frozen
class EmailSent(Event):
    """A message left (or failed to leave) the service: ``kind`` = ``verify`` | ``reset`` |
    ``invitation``, ``outcome`` = ``sent`` | ``failed`` | ``skipped`` (``email.backend =
    "none"``); ``user_id``: the recipient's user id — for an invitation, whose recipient has no
    account yet, the invitation's id. Carries neither the address nor the link."""

    kind: str
    outcome: str
    user_id: str


@attrs.frozen
class MfaChallenged(Event):
    """``user_id`` gave the right password and MFA is on: a second step (``mfa_token``) was
    issued (docs/reference/mfa-and-passkeys.md). Never the token."""

    user_id: str
    client: str


@attrs.frozen
class MfaEnabled(Event):
    """``user_id`` confirmed a TOTP enrolment: MFA is on (docs/reference/mfa-and-passkeys.md). Never
    the secret or a code."""

    user_id: str


@attrs.frozen
class RecoveryCodesRegenerated(Event):
    """``user_id`` replaced its recovery codes with ten new ones, the old ones stop working
    (docs/reference/mfa-and-passkeys.md). Never a code."""

    user_id: str


@attrs.frozen
class MfaDisabled(Event):
    """MFA of ``user_id`` was turned off by ``actor_id`` (``actor_id == user_id``: the user, with
    its password; else an admin, for a lost device). docs/reference/mfa-and-passkeys.md."""

    user_id: str
    actor_id: str


@attrs.frozen
class MfaFailed(Event):
    """A second step failed (docs/reference/mfa-and-passkeys.md): ``reason`` = ``wrong_code`` (a
    wrong, reused or malformed code against a live ``mfa_token``), ``voided`` (that wrong code was
    the fifth: the ``mfa_token`` is void) or ``invalid_mfa_token`` (unknown, expired, used or
    voided; then ``user_id`` is None). Never the code or the token."""

    user_id: str | None
    client: str
    reason: str


@attrs.frozen
class UserMoved(Event):
    """An admin (``actor_id``) moved a user from ``old_org_id`` to ``org_id``
    (docs/reference/accounts.md)."""

    user_id: str
    actor_id: str
    old_org_id: str
    org_id: str


@attrs.frozen
class GroupCreated(Event):
    """A group was created in ``org_id`` by ``actor_id``."""

    group_id: str
    org_id: str
    actor_id: str


@attrs.frozen
class GroupRenamed(Event):
    """A group of ``org_id`` was renamed by ``actor_id``."""

    group_id: str
    org_id: str
    actor_id: str


@attrs.frozen
class GroupDeleted(Event):
    """A group of ``org_id`` was deleted by ``actor_id`` (its memberships went with it)."""

    group_id: str
    org_id: str
    actor_id: str


@attrs.frozen
class AuditWriteFailed(Event):
    """An audit row recorded apart (a failure: login failed, rate limited, reuse, MFA failed)
    could not be written; ``type`` is its audit type. Logged and counted, never a 500."""

    type: str
