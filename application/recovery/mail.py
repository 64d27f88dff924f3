"""Messages the service sends (docs/reference/accounts.md): composing them from the ``email``
settings, and the outbox that sends them after the commit, off the request's path.

Sending never changes an HTTP answer: a request only posts the message; the outbox sends it in
the background, logs a failure (without the link) and publishes ``EmailSent`` either way, which
the metrics count (``authsvc_emails_sent_total{kind,outcome}``). A request that knows an
address therefore answers as fast as one that does not (no user enumeration by timing).
"""

from __future__ import annotations

import asyncio
import logging

from application.events.catalog import EmailSent
from application.ports import (
    EmailNotSent,
    EmailSender,
    EventBus,
    MailDraft,
    MailTemplateError,
    MailWriter,
)
from application.shared.settings import EmailSettings, Live
from domain.texts import Text

log = logging.getLogger("authsvc.email")

VERIFY = "verify"
"""``MailDraft.kind`` of an email-verification message (templates ``mail/verify.*``)."""
RESET = "reset"
"""``MailDraft.kind`` of a password-reset message (templates ``mail/reset.*``)."""
EMAIL_CHANGE = "email_change"
"""``MailDraft.kind`` of the link to a new address (``application.recovery.email_change``;
templates ``mail/email_change.*``)."""
EMAIL_CHANGED = "email_changed"
"""``MailDraft.kind`` of the notice to the old address once the change is confirmed
(templates ``mail/email_changed.*``)."""
KINDS = (VERIFY, RESET, EMAIL_CHANGE, EMAIL_CHANGED)
SUBJECTS = (
    Text("Confirm your email address"),
    Text("Reset your password"),
    Text("Confirm your new email address"),
    Text("Your email address was changed"),
)
"""The default ``email.verify_subject``, ``email.reset_subject``, ``email.change_subject`` and
``email.changed_subject``, marked for the catalogs: a subject is translated when the catalog
has it (these defaults), else sent as configured."""


def compose(kind: str, to: str, token: str, ttl: int, settings: EmailSettings,
            locale: str = "") -> MailDraft:  # fmt: skip
    """The draft of ``kind`` (``verify`` | ``reset``) to ``to`` in ``locale`` (empty: the
    default): ``token`` put into the configured link template (``email.verify_url`` /
    ``email.reset_url``), the configured subject, ``ttl`` (seconds the link works) for the
    templates. Raises ``KeyError`` for an unknown ``kind``."""
    template, subject = {
        VERIFY: (settings.verify_url, settings.verify_subject),
        RESET: (settings.reset_url, settings.reset_subject),
    }[kind]
    return MailDraft(kind=kind, to=to, locale=locale, subject=Text(subject),
                     link=template.format(token=token), values={"ttl": ttl})  # fmt: skip


class Outbox:
    """Sends messages in the background, after the unit of work that made their tokens
    committed: ``post(message, user_id)`` returns at once.

    ``sender`` is the ``EmailSender`` of ``email.backend``; ``settings`` the ``email`` prefix in
    force; ``writer`` renders each draft's templates in its language (in the background too:
    a broken template fails that message, never the request). With ``email.backend = "none"``
    nothing is sent (``EmailSent`` outcome ``skipped``). ``drain(grace)`` waits for messages
    under way (at shutdown).
    """

    def __init__(self, sender: EmailSender, bus: EventBus, settings: Live[EmailSettings],
                 writer: MailWriter) -> None:  # fmt: skip
        self._sender = sender
        self._bus = bus
        self._settings = settings
        self._writer = writer
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def enabled(self) -> bool:
        """False with ``email.backend = "none"``: posted messages are dropped."""
        return self._settings.current.backend != "none"

    def post(self, draft: MailDraft, user_id: str) -> None:
        """Write and send ``draft`` (to ``user_id``) in the background; never raises."""
        task = asyncio.get_running_loop().create_task(self._send(draft, user_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, draft: MailDraft, user_id: str) -> None:
        outcome = "sent"
        if not self.enabled:
            outcome = "skipped"
        else:
            try:
                await self._sender.send(self._writer.write(draft))
            except (EmailNotSent, MailTemplateError) as exc:
                outcome = "failed"
                log.warning("%s email to user %s not sent: %s", draft.kind, user_id, exc.reason)
            except Exception as exc:  # a bug in a sender must not kill the outbox
                outcome = "failed"
                log.error(
                    "%s email to user %s not sent: %s", draft.kind, user_id, type(exc).__name__
                )
        await self._bus.publish(EmailSent(kind=draft.kind, outcome=outcome, user_id=user_id))

    async def drain(self, grace: float) -> None:
        """Wait up to ``grace`` seconds for the messages under way; cancel what is left."""
        pending = set(self._tasks)
        if not pending:
            return
        _, late = await asyncio.wait(pending, timeout=grace)
        for task in late:
            task.cancel()
        if late:
            log.warning("%d email(s) still under way at shutdown were dropped", len(late))
