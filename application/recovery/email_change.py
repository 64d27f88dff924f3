"""Changing a user's email (docs/reference/accounts.md, "Changing the email"; ADR 0043).

``POST /me/email`` ``{"new_email", "password"}`` (and the account page's form) checks the
password (``Reauthentication.confirm_password``: a wrong one counts against the login throttle),
then stores an ``email_change`` token — 256 bits, only its SHA-256 stored, with the new address,
living ``auth.email_verification_ttl`` seconds, voiding the user's earlier ones — and mails its
link (``email.change_url``) to the NEW address. The answer is the same (202) whether or not
another account holds that address: nothing is learned about it. Opening the link
(``confirm``) moves the account: the address is checked again for uniqueness — taken by then,
the link fails cleanly (409 ``email_taken``) and nothing changes — the email becomes the new
one and counts as verified, the user's outstanding email tokens (reset, verification, other
changes) are voided, and a notice goes to the OLD address. Requests are throttled per user and
client address like ``/me/email/verify`` (each counts; 429 past ``auth.login_max_failures``).
"""

from __future__ import annotations

from datetime import timedelta

import attrs

from application.events.audit import record
from application.events.catalog import EmailChanged, EmailChangeRequested, Event
from application.ports import Clock, EmailNormalizer, EventBus, MailDraft, Storage
from application.recovery.mail import EMAIL_CHANGE, EMAIL_CHANGED, Outbox
from application.shared.proven_email import drop_unproven_identities
from application.shared.reauth import Reauthentication
from application.shared.settings import AuthSettings, EmailSettings, Live
from application.shared.steps import hash_token, new_opaque_token, publish_all
from application.shared.throttle import LoginThrottle
from application.shared.users import token_user
from domain.errors import EmailTaken, FieldError, InvalidVerificationToken, ValidationFailed
from domain.login import still_active
from domain.model import EmailToken, EmailTokenPurpose
from domain.texts import Text

__all__ = ["CHANGE_THROTTLE_PREFIX", "EmailChange", "change_message", "changed_notice"]

CHANGE_THROTTLE_PREFIX = "email-change:"
"""The throttle key of an email-change request is this prefix and the user id."""
_INVALID = "the confirmation link is invalid or expired"


def change_message(to: str, token: str, ttl: int, settings: EmailSettings,
                   locale: str = "") -> MailDraft:  # fmt: skip
    """The draft to the new address ``to`` in ``locale`` (empty: the default; templates
    ``mail/email_change.*``): the ``email.change_url`` link holding ``token``, working ``ttl``
    seconds and once, under ``email.change_subject``."""
    link = settings.change_url.format(token=token)
    return MailDraft(kind=EMAIL_CHANGE, to=to, locale=locale,
                     subject=Text(settings.change_subject), link=link,
                     values={"ttl": ttl})  # fmt: skip


def changed_notice(to: str, new_email: str, settings: EmailSettings,
                   locale: str = "") -> MailDraft:  # fmt: skip
    """The draft to the old address ``to`` in ``locale`` (templates ``mail/email_changed.*``):
    the account's email is now ``new_email``; no link."""
    return MailDraft(kind=EMAIL_CHANGED, to=to, locale=locale,
                     subject=Text(settings.changed_subject), link="",
                     values={"new_email": new_email})  # fmt: skip


@attrs.frozen
class EmailChange:
    """``request`` (POST /me/email) and ``confirm`` (the link's page and ``POST
    /email/change``). ``EmailChange(storage, outbox, clock, auth_settings, email_settings,
    bus, throttle, reauthentication, normalize_email)``."""

    storage: Storage
    outbox: Outbox
    clock: Clock
    auth: Live[AuthSettings]
    email: Live[EmailSettings]
    bus: EventBus
    throttle: LoginThrottle
    reauth: Reauthentication
    normalize_email: EmailNormalizer

    async def request(self, user_id: str, new_email: str, password: str, client: str,
                      locale: str = "") -> None:  # fmt: skip
        """Mail a confirmation link to ``new_email`` for ``user_id``, after its ``password``
        sent from ``client`` (the client address), in ``locale`` (the request's language;
        empty: the default). Raises ``ValidationFailed`` (422, field
        ``new_email``: not an address, or the current one), ``RateLimited`` (429),
        ``InvalidOldPassword`` (403, counted), ``InvalidToken`` (user gone or disabled).
        Publishes nothing; records ``email.change_requested``."""
        try:
            new = self.normalize_email(new_email)
        except ValidationFailed as e:
            reason = "; ".join(f.message for f in e.errors) or "is not an email address"
            raise ValidationFailed([FieldError("new_email", reason)]) from None
        async with self.storage.read() as uow:
            user = await token_user(uow, user_id)
        if new == user.email:
            raise ValidationFailed([FieldError("new_email", "is your current address")])
        await self.throttle.attempt(CHANGE_THROTTLE_PREFIX + user.id, client)
        await self.reauth.confirm_password(user, password, client)
        clear, digest = new_opaque_token()
        ttl, now = self.auth.current.email_verification_ttl, self.clock.now()
        token = EmailToken(digest, user.id, EmailTokenPurpose.EMAIL_CHANGE,
                           now + timedelta(seconds=ttl), now, new_email=new)  # fmt: skip
        async with self.storage.begin() as uow:
            await token_user(uow, user_id)
            await uow.email_tokens.void(user.id, EmailTokenPurpose.EMAIL_CHANGE)
            await uow.email_tokens.add(token)
            await record(uow, [EmailChangeRequested(user.id)], now)
            await uow.commit()
        self.outbox.post(change_message(new, clear, ttl, self.email.current, locale), user.id)

    async def confirm(self, token: str, locale: str = "") -> None:
        """Move the token's user to the token's address (verified), spending the token and
        voiding the user's other email tokens (a first proven address also removes the
        identities linked while the email was unverified, as a verification link does:
        ``drop_unproven_identities``); then tell the old address. Raises
        ``InvalidVerificationToken`` (400) for an unknown, used, expired token or a disabled
        user, ``EmailTaken`` (409) when another account holds the address by now — nothing
        changes either way. Publishes ``EmailChanged`` (and ``IdentityUnlinked`` /
        ``SessionEnded``). The notice is written in ``locale`` (the confirming request's)."""
        async with self.storage.begin() as uow:
            found = await uow.email_tokens.find(hash_token(token), EmailTokenPurpose.EMAIL_CHANGE)
            if found is None or found.is_expired(self.clock.now()) or found.new_email is None:
                raise InvalidVerificationToken(_INVALID)
            user = await uow.users.get(found.user_id)
            if not still_active(user):
                raise InvalidVerificationToken(_INVALID)
            if await uow.users.get_by_email(found.new_email) is not None:
                raise EmailTaken("another account uses this address")
            if await uow.email_tokens.take(found.token_hash, found.purpose) is None:
                raise InvalidVerificationToken(_INVALID)  # spent meanwhile
            await uow.users.update(attrs.evolve(user, email=found.new_email, email_verified=True))
            for purpose in EmailTokenPurpose:
                await uow.email_tokens.void(user.id, purpose)
            events: list[Event] = [EmailChanged(user.id)]
            now = self.clock.now()
            if not user.email_verified:  # first proof of an address: as a verification link
                events += await drop_unproven_identities(uow, user.id, False, now)
            await record(uow, events, now)
            await uow.commit()
        await publish_all(self.bus, events)
        notice = changed_notice(user.email, found.new_email, self.email.current, locale)
        self.outbox.post(notice, user.id)
