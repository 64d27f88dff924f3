"""The ``console`` email backend: each message, with its link, is written to the log.

For development only: the link holds a single-use token that anyone who reads the log can
use. The service says so once when it starts (``CONSOLE_WARNING``).
"""

from __future__ import annotations

import logging

from application.ports import EmailMessage, EmailSender

log = logging.getLogger("authsvc.email")

CONSOLE_WARNING = (
    "email.backend = console: messages and their links are written to this log"
    " (for development only; set email.backend = smtp in production)"
)
"""What the service logs once at start with the console backend."""


class ConsoleEmailSender(EmailSender):
    """``EmailSender`` that logs each message (logger ``authsvc.email``, level INFO): the
    recipient, the subject and the plain-text body with its link. Never raises."""

    def __init__(self, from_address: str = "authsvc@localhost") -> None:
        self._from = from_address

    async def send(self, message: EmailMessage) -> None:
        """Write ``message`` to the log."""
        log.info(
            "email (console backend) from %s to %s, subject %r:\n%s",
            self._from,
            message.to,
            message.subject,
            message.text,
        )
