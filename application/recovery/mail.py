"""Messages the service sends (docs/reference/accounts.md): composing them from the ``email``
settings, and the outbox that sends them after the commit, off the request's path.

Sending never changes an HTTP answer: a request only posts the message; the outbox sends it in
the background, logs a failure (without the link) and publishes ``EmailSent`` either way, which
the metrics count (``authsvc_emails_sent_total{kind,outcome}``). A request that knows an
address therefore answers as fast as one that does not (no user enumeration by timing).
"""

from __future__ import annotations

import asyncio
import html
import logging

from application.events.catalog import EmailSent
from application.ports import EmailMessage, EmailNotSent, EmailSender, EventBus
from application.shared.settings import EmailSettings, Live

log = logging.getLogger("authsvc.email")

VERIFY = "verify"
"""``EmailMessage.kind`` of an email-verification message."""
RESET = "reset"
"""``EmailMessage.kind`` of a password-reset message."""
EMAIL_CHANGE = "email_change"
"""``EmailMessage.kind`` of the link to a new address (``application.recovery.email_change``)."""
EMAIL_CHANGED = "email_changed"
"""``EmailMessage.kind`` of the notice to the old address once the change is confirmed."""
KINDS = (VERIFY, RESET, EMAIL_CHANGE, EMAIL_CHANGED)

_TEXTS = {
    VERIFY: (
        "Please confirm that this is your email address by opening the link below.",
        "If you did not create an account, you can ignore this message.",
    ),
    RESET: (
        "Someone asked to reset the password of your account. To choose a new password, open"
        " the link below.",
        "If it was not you, ignore this message: your password stays as it is.",
    ),
}


def _duration(seconds: int) -> str:
    if seconds % 3600 == 0:
        hours = seconds // 3600
        return f"{hours} hour{'s' if hours != 1 else ''}"
    minutes = max(1, seconds // 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def compose(kind: str, to: str, token: str, ttl: int, settings: EmailSettings) -> EmailMessage:
    """The message of ``kind`` (``verify`` | ``reset``) to ``to`` with ``token`` put into the
    configured link template (``email.verify_url`` / ``email.reset_url``), the configured
    subject, a plain-text body and an HTML alternative (the link escaped), saying the link works
    for ``ttl`` seconds. Raises ``KeyError`` for an unknown ``kind``."""
    intro, outro = _TEXTS[kind]
    template = settings.verify_url if kind == VERIFY else settings.reset_url
    subject = settings.verify_subject if kind == VERIFY else settings.reset_subject
    link = template.format(token=token)
    lasts = f"The link works for {_duration(ttl)} and only once."
    text = f"{intro}\n\n{link}\n\n{lasts}\n{outro}\n"
    href = html.escape(link, quote=True)
    body = (
        f'<p>{html.escape(intro)}</p>\n<p><a href="{href}">{href}</a></p>\n'
        f"<p>{html.escape(lasts)}<br>{html.escape(outro)}</p>\n"
    )
    return EmailMessage(kind=kind, to=to, subject=subject, text=text, html=body, link=link)


class Outbox:
    """Sends messages in the background, after the unit of work that made their tokens
    committed: ``post(message, user_id)`` returns at once.

    ``sender`` is the ``EmailSender`` of ``email.backend``; ``settings`` the ``email`` prefix in
    force. With ``email.backend = "none"`` nothing is sent (``EmailSent`` outcome ``skipped``).
    ``drain(grace)`` waits for messages under way (at shutdown).
    """

    def __init__(self, sender: EmailSender, bus: EventBus, settings: Live[EmailSettings]) -> None:
        self._sender = sender
        self._bus = bus
        self._settings = settings
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def enabled(self) -> bool:
        """False with ``email.backend = "none"``: posted messages are dropped."""
        return self._settings.current.backend != "none"

    def post(self, message: EmailMessage, user_id: str) -> None:
        """Send ``message`` (to ``user_id``) in the background; never raises."""
        task = asyncio.get_running_loop().create_task(self._send(message, user_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send(self, message: EmailMessage, user_id: str) -> None:
        outcome = "sent"
        if not self.enabled:
            outcome = "skipped"
        else:
            try:
                await self._sender.send(message)
            except EmailNotSent as exc:
                outcome = "failed"
                log.warning("%s email to user %s not sent: %s", message.kind, user_id, exc.reason)
            except Exception as exc:  # a bug in a sender must not kill the outbox
                outcome = "failed"
                log.error(
                    "%s email to user %s not sent: %s", message.kind, user_id, type(exc).__name__
                )
        await self._bus.publish(EmailSent(kind=message.kind, outcome=outcome, user_id=user_id))

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
