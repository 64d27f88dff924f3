"""Email verification and password reset by emailed links (docs/reference/accounts.md).

Tokens are 256 bits from ``secrets``, stored only as SHA-256 hashes (``EmailTokenStore``),
single use (taken by an atomic delete). Messages go through the ``Outbox`` after the commit, so
the HTTP answer never depends on the mail server. Requests that send mail (``/password/forgot``,
``/me/email/verify``) are throttled by the login throttle's mechanism under their own keys: each
request counts, and after ``auth.login_max_failures`` within ``auth.login_failure_window`` seconds
for one email (or user) from one client address, 429 with ``Retry-After``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import attrs

from application.events.audit import record
from application.events.catalog import (
    EmailVerified,
    Event,
    PasswordReset,
    PasswordResetRequested,
    SessionEnded,
)
from application.ports import Clock, EmailNormalizer, EventBus, Hasher, Storage
from application.recovery.mail import RESET, VERIFY, Outbox, compose
from application.shared.backchannel import queue_logout_notices
from application.shared.proven_email import drop_unproven_identities
from application.shared.settings import AuthSettings, EmailSettings, Live
from application.shared.steps import hash_token, new_opaque_token, publish_all
from application.shared.throttle import LoginThrottle
from application.shared.users import user_in_scope
from application.shared.voiding import void_outstanding_proofs
from domain import policy
from domain.errors import Conflict, InvalidResetToken, InvalidVerificationToken
from domain.login import still_active
from domain.model import (
    EmailToken,
    EmailTokenPurpose,
    SessionEndReason,
    User,
    check_password_policy,
)
from domain.policy import Actor, Operation

RESET_THROTTLE_PREFIX = "password-reset:"
"""The throttle key of /password/forgot is this prefix and the canonical email (then hashed
with the client address), apart from the login's own count."""
VERIFY_THROTTLE_PREFIX = "email-verification:"
"""The throttle key of /me/email/verify is this prefix and the user id."""


@attrs.frozen
class _Mailer:
    """What both use cases share (their first five fields): storing a new token for a user
    (voiding its older ones of the same purpose, in one unit of work) and posting its message
    after the commit."""

    storage: Storage
    outbox: Outbox
    clock: Clock
    auth: Live[AuthSettings]
    email: Live[EmailSettings]

    def ttl(self, purpose: EmailTokenPurpose) -> int:
        cfg = self.auth.current
        if purpose is EmailTokenPurpose.RESET:
            return cfg.password_reset_ttl
        return cfg.email_verification_ttl

    async def mail_token(
        self, user: User, purpose: EmailTokenPurpose, audited: Sequence[Event] = (),
        locale: str = "",
    ) -> None:  # fmt: skip
        """Store a new ``purpose`` token for ``user`` (voiding its older ones) with the audit
        rows of ``audited``, in one unit of work; then post the message in ``locale``."""
        clear, digest = new_opaque_token()
        ttl, now = self.ttl(purpose), self.clock.now()
        token = EmailToken(digest, user.id, purpose, now + timedelta(seconds=ttl), now)
        async with self.storage.begin() as uow:
            await uow.email_tokens.void(user.id, purpose)
            await uow.email_tokens.add(token)
            await record(uow, audited, now)
            await uow.commit()
        kind = RESET if purpose is EmailTokenPurpose.RESET else VERIFY
        draft = compose(kind, user.email, clear, ttl, self.email.current, locale)
        self.outbox.post(draft, user.id)


@attrs.frozen
class EmailVerification(_Mailer):
    """Verification of a user's email address (docs/reference/accounts.md): the message at
    registration, its link (``verify``) and a new message on request (``resend``).

    ``EmailVerification(storage, outbox, clock, auth_settings, email_settings, bus, throttle)``.
    """

    bus: EventBus
    throttle: LoginThrottle

    async def send_for(self, user: User, *, locale: str = "") -> None:
        """Store a new verification token for ``user`` (older ones are void) and post its
        message in ``locale`` (the request's; empty: ``ui.default_locale``); nothing for a
        verified user or with ``email.backend = "none"``. Raises what the storage raises."""
        if user.email_verified or not self.outbox.enabled:
            return
        await self.mail_token(user, EmailTokenPurpose.VERIFY, locale=locale)

    async def resend(self, user: User, client: str, *, locale: str = "") -> None:
        """POST /me/email/verify: a new message to ``user`` (as ``send_for``). Raises
        ``RateLimited`` (429) when this user has asked too often from this ``client``."""
        key = VERIFY_THROTTLE_PREFIX + user.id
        await self.throttle.attempt(key, client)  # counted and checked at once
        await self.send_for(user, locale=locale)

    async def verify(self, token: str) -> User:
        """POST /email/verify: mark the token's user verified and spend the token (and any
        other verification token of the user); returns the user as now stored. The identities
        linked while the email was unverified are removed and the user's sessions end
        (``drop_unproven_identities``).
        Publishes ``EmailVerified`` (and ``IdentityUnlinked`` / ``SessionEnded``).

        Raises ``InvalidVerificationToken`` (400) for an unknown, used or expired token; then
        nothing changes.
        """
        async with self.storage.begin() as uow:
            found = await uow.email_tokens.take(hash_token(token), EmailTokenPurpose.VERIFY)
            if found is None or found.is_expired(self.clock.now()):
                raise InvalidVerificationToken("the verification link is invalid or expired")
            user = await uow.users.get(found.user_id)
            if user is None:  # pragma: no cover - the token cascades away with its user
                raise InvalidVerificationToken("the verification link is invalid or expired")
            verified = attrs.evolve(user, email_verified=True)
            await uow.users.update(verified)
            await uow.email_tokens.void(user.id, EmailTokenPurpose.VERIFY)
            events: list[Event] = [EmailVerified(user_id=user.id)]
            events += await drop_unproven_identities(
                uow, user.id, sessions_ended=False, now=self.clock.now()
            )
            await record(uow, events, self.clock.now())
            await uow.commit()
        await publish_all(self.bus, events)
        return verified


@attrs.frozen
class PasswordRecovery(_Mailer):
    """Password reset by an emailed link (docs/reference/accounts.md): ``forgot`` sends the link,
    ``reset`` sets the new password.

    ``PasswordRecovery(storage, outbox, clock, auth_settings, email_settings, bus, throttle,
    hasher, normalize_email)``.
    """

    bus: EventBus
    throttle: LoginThrottle
    hasher: Hasher
    normalize_email: EmailNormalizer

    async def forgot(self, email: str, client: str, *, locale: str = "") -> None:
        """POST /password/forgot: if an enabled user has ``email``, void its older reset tokens,
        store a new one and post the message (in ``locale``, the request's). The same work and
        answer either way (no user enumeration): a token is made and hashed, one unit of work
        runs, the message is sent in the background. Publishes ``PasswordResetRequested``.

        Raises ``ValidationFailed`` (422) for an email whose syntax is wrong (no user can have
        it: that tells nothing), ``RateLimited`` (429) after too many requests for this email
        from this ``client`` address.
        """
        canonical = self.normalize_email(email)
        key = RESET_THROTTLE_PREFIX + canonical
        await self.throttle.attempt(key, client)  # counted and checked at once
        async with self.storage.begin() as uow:
            user = await uow.users.get_by_email(canonical)
        target = user if still_active(user) else None
        requested = PasswordResetRequested(user_id=target.id if target else None, client=client)
        if target is not None:
            await self.mail_token(target, EmailTokenPurpose.RESET, [requested], locale)
        else:  # the same work as for a user: a token, its hash, a unit of work, an audit row
            new_opaque_token()
            async with self.storage.begin() as uow:
                await uow.email_tokens.void("", EmailTokenPurpose.RESET)
                await record(uow, [requested], self.clock.now())
                await uow.commit()
        await self.bus.publish(requested)

    async def send_to_user(self, actor: Actor, user_id: str, client: str) -> None:
        """POST /users/{id}/password-reset (docs/reference/accounts.md): an administrator mails
        the user ``user_id`` a reset link, as ``forgot`` does for its email (older reset tokens
        void, the message posted after the commit, valid ``auth.password_reset_ttl`` s).

        Rules, in order (``domain.policy.check_user_management`` with
        ``SEND_PASSWORD_RESET``): viewer/operator → ``Forbidden``; missing or outside an
        org_admin's organization → ``NotFound``; an org_admin on a superadmin → ``Forbidden``;
        a disabled user → ``Conflict`` (its link would be refused); ``email.backend = "none"``
        → ``Conflict`` (no message can go). Then the throttle of /password/forgot for that
        email from ``client``, counted and checked at once: ``RateLimited`` (429). Nothing is
        stored or sent on any refusal. Records ``PasswordResetRequested`` with ``actor_id`` the
        administrator in the token's transaction and publishes it. The message
        is in ``ui.default_locale`` (the user's own language is not known).
        """
        policy.require(actor, Operation.SEND_PASSWORD_RESET)
        async with self.storage.read() as uow:
            target = await user_in_scope(uow, actor, user_id)
        policy.check_user_management(actor, target, Operation.SEND_PASSWORD_RESET)
        if not still_active(target):
            raise Conflict("the user is disabled: a reset link would be refused")
        if not self.outbox.enabled:
            raise Conflict('email.backend is "none": no message can be sent')
        key = RESET_THROTTLE_PREFIX + self.normalize_email(target.email)
        await self.throttle.attempt(key, client)  # counted and checked at once
        requested = PasswordResetRequested(target.id, client, actor.actor_id)
        await self.mail_token(target, EmailTokenPurpose.RESET, [requested])
        await self.bus.publish(requested)

    async def reset(self, token: str, new_password: str) -> None:
        """POST /password/reset: store the new bcrypt hash, mark the email verified, void every
        reset token and ``mfa_token`` of the user, end every session of it and remove the
        identities linked while the email was unverified (``drop_unproven_identities``) — in
        one transaction with spending the token. Publishes ``PasswordReset``, a
        ``SessionEnded`` (reason ``password_reset``) per session and an ``IdentityUnlinked``
        per removed identity.

        Raises ``ValidationFailed`` (422, the new password breaks the policy; checked first),
        ``InvalidResetToken`` (400) for an unknown, used, voided or expired token, or one of a
        disabled user (docs/reference/accounts.md: refused like a used one). On any
        error nothing changes.
        """
        check_password_policy(new_password, self.auth.current.password_min_length, "new_password")
        digest = hash_token(token)
        async with self.storage.read() as uow:
            found = await uow.email_tokens.find(digest, EmailTokenPurpose.RESET)
        if found is None or found.is_expired(self.clock.now()):
            raise InvalidResetToken("the reset link is invalid or expired")
        new_hash = await self.hasher.hash(new_password)  # outside the transaction (slow)
        async with self.storage.begin() as uow:
            taken = await uow.email_tokens.take(digest, EmailTokenPurpose.RESET)
            if taken is None or taken.is_expired(self.clock.now()):
                raise InvalidResetToken("the reset link is invalid or expired")
            user = await uow.users.get(taken.user_id)
            if not still_active(user):  # a disabled user's token: refused like a used one
                raise InvalidResetToken("the reset link is invalid or expired")
            await uow.users.update(attrs.evolve(user, password_hash=new_hash, email_verified=True))
            await void_outstanding_proofs(uow, user.id)
            await uow.email_tokens.void(user.id, EmailTokenPurpose.VERIFY)
            await queue_logout_notices(uow, user.id, self.clock.now())
            ended = await uow.sessions.end_all(user.id)
            reason = SessionEndReason.PASSWORD_RESET
            events: list[Event] = [PasswordReset(user_id=user.id, revoked=len(ended))]
            events += [SessionEnded(user.id, s, reason, user.id) for s in ended]
            events += await drop_unproven_identities(
                uow, user.id, sessions_ended=True, now=self.clock.now()
            )
            await record(uow, events, self.clock.now())
            await uow.commit()
        await publish_all(self.bus, events)
