"""Email syntax checking and normalization with the ``email-validator`` library."""

from __future__ import annotations

from email_validator import EmailNotValidError, validate_email

from domain.errors import FieldError, ValidationFailed

MAX_EMAIL_LENGTH = 254
"""RFC 5321 limit on a forward path, in characters."""


def normalize_email(raw: str) -> str:
    """The canonical form of ``raw``: syntax-checked (no DNS lookups), then lower-cased whole,
    so emails are stored and compared case-insensitively (docs/reference/tokens-and-sessions.md).

    Raises ``ValidationFailed`` naming the field ``email`` with the library's reason.
    """
    if len(raw) > MAX_EMAIL_LENGTH:
        raise ValidationFailed([FieldError("email", "is longer than 254 characters")])
    try:
        info = validate_email(raw, check_deliverability=False)
    except EmailNotValidError as exc:
        raise ValidationFailed([FieldError("email", str(exc))]) from None
    return info.normalized.lower()
