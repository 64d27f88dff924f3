"""The login rules (docs/reference/tokens-and-sessions.md, docs/reference/federation.md): whether
a user who proved who it is may log in (``login_refusal``), whether it still may
(``still_active``), whether what a login issued still stands (``user_token_live``,
``code_login_live``, ``hint_ends_session``), and what an upstream identity becomes
(``federated_account``, ``new_user_email_verified``, ``native_id_token_refusal``,
``check_unlink_leaves_a_login``).

Pure functions over domain values, like ``domain.policy`` (which decides access by role and
organization): no I/O, nothing but the standard library and ``domain``.
"""

from __future__ import annotations

import enum
from datetime import datetime, timedelta
from typing import TypeAlias, TypeGuard

from domain.errors import (
    AccountDisabled,
    AccountExists,
    EmailNotVerified,
    FederationNotAllowed,
    LastLoginMethod,
)
from domain.model import Session, User

LoginRefusal: TypeAlias = AccountDisabled | EmailNotVerified
"""Why a user who proved who it is may still not log in; its ``code`` is the audit reason."""


def still_active(user: User | None) -> TypeGuard[User]:
    """Does ``user`` still stand behind what it was issued (a token, a session, a link)? False
    once it is gone (None: deleted) or disabled (docs/reference/accounts.md). The one rule every
    token, session and hosted-session check asks after the login itself."""
    return user is not None and not user.disabled


def login_refusal(user: User, require_verified_email: bool) -> LoginRefusal | None:
    """May ``user`` log in now? None if so, else the refusal to raise: ``AccountDisabled``
    (403 ``account_disabled``; docs/reference/accounts.md) for a disabled account,
    ``EmailNotVerified`` (403 ``email_not_verified``; section 9) for an unverified email while
    ``auth.require_verified_email`` (``require_verified_email``) is on.

    The one rule for every way in (password, MFA step, passkey, and later federated logins),
    asked only once the user has proved itself, so nothing is learned without the credential.
    The refusal's ``code`` is the ``reason`` of the ``login.failed`` audit row (section 11).
    """
    if not still_active(user):
        return AccountDisabled("this account is disabled")
    if require_verified_email and not user.email_verified:
        return EmailNotVerified("confirm your email address first: see the message we sent")
    return None


def user_token_live(
    client_id: object,
    user_id: str,
    family: Session | None,
    user: User | None,
    revoked: bool,
    now: datetime,
) -> bool:
    """Does a user's access token of the code flow still stand? ``client_id`` and
    ``user_id`` are its ``client_id`` and ``sub`` claims, ``family`` the session its ``sid``
    names (None once ended), ``user`` its user (None once deleted), ``revoked`` whether its
    ``jti`` was revoked (RFC 7009).

    True only while the family lives (not ended by a logout, a password change, a disable, a
    consent revoked, a code reused or a revocation, and before its ``expires_at``), belongs to
    that user and was started by that client, the user exists and is enabled, and the token
    was not revoked. The one rule of ``/oauth/userinfo`` (RFC 6750 §3.1 ``invalid_token``)
    and ``/oauth/introspect`` (RFC 7662 §2.2: a revoked token is ``active: false``).
    """
    return (
        family is not None
        and family.user_id == user_id
        and family.client_id is not None
        and family.client_id == client_id
        and family.expires_at > now
        and still_active(user)
        and not revoked
    )


def code_login_live(user_id: str, login: Session | None, now: datetime) -> bool:
    """May an authorization code of ``user_id`` still be redeemed, given ``login``, the
    hosted session's ``sessions`` row it was issued under (None once that login ended: its
    logout, a password change, a disable, the user's deletion, or a newer login in that
    browser)? True while that row lives, is the user's and is before its ``expires_at``
    (OIDC Core §3.1.2.1; the code is bound to the login it came from). The caller answers
    ``invalid_grant`` otherwise (RFC 6749 §5.2)."""
    return login is not None and login.user_id == user_id and login.expires_at > now


def hint_ends_session(hint_sub: object, hint_sid: object, user_id: str, session_id: str) -> bool:
    """May an RP-initiated logout end the browser's session (of ``user_id``, ``sessions`` row
    ``session_id``) without asking? Only when the ``id_token_hint``'s ``sub`` is that user and
    its ``sid``, when present, that session (RP-Initiated Logout 1.0 §2: otherwise the OP asks
    the user, so anyone's own ID token cannot sign a victim out; docs/adr/0032)."""
    return hint_sub == user_id and (hint_sid is None or hint_sid == session_id)


class FederatedOutcome(enum.Enum):
    """What an unknown upstream identity does (docs/reference/federation.md): link the account of
    its email, or create a new user."""

    LINK = "link"
    CREATE = "create"


def federated_account(
    upstream_email: str | None,
    upstream_email_verified: bool,
    local: User | None,
    trust_email: bool,
    create_users: bool,
    domain_allowed: bool,
) -> FederatedOutcome:
    """The linking rule of docs/reference/federation.md for an identity (issuer, sub) seen for the
    first time; ``local`` is the user whose email equals the provider's (or None).

    - An existing account is linked only when the provider has ``trust_email``, says
      ``email_verified`` exactly true (``upstream_email_verified``), and the local email is
      verified too; otherwise ``AccountExists`` (409 ``account_exists``: sign in, then link
      from the account page). No automatic link ever rides on an unverified email, on either
      side (research §4.2; the pre-hijacked account of UP-09 (e) is not linked).
    - No account: a new user when ``create_users`` and the email's domain is allowed, else
      ``FederationNotAllowed`` (403). A provider that gave no email creates nobody.
    """
    if local is not None:
        if trust_email and upstream_email_verified and local.email_verified:
            return FederatedOutcome.LINK
        raise AccountExists("an account with this email exists: sign in to it, then link")
    if upstream_email is None or not create_users or not domain_allowed:
        raise FederationNotAllowed("this provider may not create an account for this email")
    return FederatedOutcome.CREATE


def new_user_email_verified(upstream_email_verified: bool, trust_email: bool) -> bool:
    """Whether a user created by a provider's login starts with a verified email: only when the
    provider has ``trust_email`` and says ``email_verified`` exactly true. A provider without
    ``trust_email`` is not trusted to vouch for addresses (it may let anyone claim any email), so
    its users prove their email themselves (a verification link or a password reset;
    ``docs/reference/accounts.md``), which then removes the identities linked before — the
    pre-hijacked account of Sudhodanan & Paverd 2022 (``docs/adr/0034-federated-login.md``)."""
    return trust_email and upstream_email_verified


NATIVE_ID_TOKEN_MAX_AGE = timedelta(seconds=300)
"""How old an ID token sent to ``POST /login/federated`` may be (its ``iat``)."""


def native_id_token_refusal(
    issued_at: datetime | None, expires_at: datetime | None, now: datetime
) -> str | None:
    """Why an ID token a native app sent (``POST /login/federated``) is refused before its
    nonce is spent, or None: without ``iat`` or ``exp`` (``id_token_invalid``), or issued more
    than ``NATIVE_ID_TOKEN_MAX_AGE`` before ``now`` (``id_token_stale``) — a token lifted from
    a log or a device cannot be replayed later (OpenID Connect Core §15.5.2)."""
    if issued_at is None or expires_at is None:
        return "id_token_invalid"
    if now - issued_at > NATIVE_ID_TOKEN_MAX_AGE:
        return "id_token_stale"
    return None


def check_unlink_leaves_a_login(user: User, other_identities: int) -> None:
    """A user may unlink an identity only while another way to sign in is left: a password,
    a passkey or another identity (docs/reference/federation.md). Raises ``LastLoginMethod``
    (409)."""
    if not user.password_hash and user.passkeys == 0 and other_identities == 0:
        raise LastLoginMethod("this is the last way to sign in to this account")
