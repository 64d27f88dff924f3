"""``WebhookSigner`` on the ``standardwebhooks`` library (the Standard Webhooks specification;
docs/reference/webhooks.md): the reference implementation signs, so a receiver verifying with
any Standard Webhooks library accepts what we send."""

from __future__ import annotations

from datetime import datetime

from standardwebhooks.webhooks import Webhook

from application.ports import WebhookSigner

__all__ = ["StandardWebhookSigner"]


class StandardWebhookSigner(WebhookSigner):
    """Signs with ``standardwebhooks.Webhook(secret).sign``: ``v1,`` + base64 HMAC-SHA256."""

    def sign(self, secret: str, message_id: str, timestamp: datetime, body: str) -> str:
        """The ``webhook-signature`` value. Raises ``ValueError`` for a malformed secret."""
        try:
            return Webhook(secret).sign(message_id, timestamp, body)
        except Exception as exc:  # the library raises binascii.Error and others
            raise ValueError("malformed webhook secret") from exc
