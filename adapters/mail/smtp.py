"""The ``smtp`` email backend on aiosmtplib: STARTTLS, authentication, a timeout.

Each message is a MIME ``multipart/alternative`` (plain text and HTML) built by the standard
library's ``email.message.EmailMessage``; one connection per message. The settings are read
per message, so a configuration refresh applies to the next one.
"""

from __future__ import annotations

import email.message
import email.utils

import aiosmtplib

from application.ports import EmailMessage, EmailNotSent, EmailSender
from application.shared.settings import EmailSettings, Live


def mime(message: EmailMessage, from_address: str) -> email.message.EmailMessage:
    """The MIME form of ``message`` from ``from_address``: headers From, To, Subject, Date,
    Message-ID; a text/plain part and a text/html alternative (UTF-8)."""
    mail = email.message.EmailMessage()
    mail["From"] = from_address
    mail["To"] = message.to
    mail["Subject"] = message.subject
    mail["Date"] = email.utils.formatdate(usegmt=True)
    mail["Message-ID"] = email.utils.make_msgid(domain=from_address.rpartition("@")[2] or None)
    mail.set_content(message.text)
    mail.add_alternative(message.html, subtype="html")
    return mail


class SmtpEmailSender(EmailSender):
    """``EmailSender`` over SMTP (RFC 5321) with ``email.smtp_host``, ``smtp_port``,
    ``smtp_starttls`` (RFC 3207: upgrade or fail), ``smtp_username``/``smtp_password``
    (AUTH when set) and ``smtp_timeout`` seconds per operation.

    Raises ``EmailNotSent`` naming the failure's kind (refused, unreachable, timed out) and
    never the message, its link or the password.
    """

    def __init__(self, settings: Live[EmailSettings]) -> None:
        self._settings = settings

    async def send(self, message: EmailMessage) -> None:
        """Send ``message``. Raises ``EmailNotSent``."""
        cfg = self._settings.current
        try:
            await aiosmtplib.send(
                mime(message, cfg.from_address),
                hostname=cfg.smtp_host,
                port=cfg.smtp_port,
                username=cfg.smtp_username or None,
                password=cfg.smtp_password or None,
                start_tls=cfg.smtp_starttls,
                timeout=cfg.smtp_timeout,
            )
        except aiosmtplib.SMTPTimeoutError:
            raise EmailNotSent(
                f"the SMTP server {cfg.smtp_host}:{cfg.smtp_port} timed out"
            ) from None
        except aiosmtplib.SMTPConnectError as exc:
            raise EmailNotSent(
                f"cannot connect to the SMTP server {cfg.smtp_host}:{cfg.smtp_port}:"
                f" {type(exc).__name__}"
            ) from None
        except aiosmtplib.SMTPResponseException as exc:
            raise EmailNotSent(f"the SMTP server refused the message: {exc.code}") from None
        except (TimeoutError, aiosmtplib.SMTPException, OSError) as exc:
            raise EmailNotSent(f"SMTP failed: {type(exc).__name__}") from None


class ConfiguredEmailSender(EmailSender):
    """Sends through the backend ``email.backend`` names now (``console`` | ``smtp``; for
    ``none`` the outbox sends nothing), so a configuration refresh may switch it."""

    def __init__(
        self, settings: Live[EmailSettings], console: EmailSender, smtp: EmailSender
    ) -> None:
        self._settings = settings
        self._by_backend = {"console": console, "smtp": smtp}

    async def send(self, message: EmailMessage) -> None:
        """Send ``message`` by the backend in force. Raises ``EmailNotSent``."""
        backend = self._settings.current.backend
        sender = self._by_backend.get(backend)
        if sender is None:
            raise EmailNotSent(f"email.backend = {backend} sends nothing")
        await sender.send(message)
