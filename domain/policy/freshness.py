"""The fresh-login rule of the account pages (docs/reference/accounts.md, ASVS 5.0 V7.5.1):
adding a sign-in factor, changing the password or the email and deleting the account from the
hosted pages need a login of at most ``ui.reauthentication_window`` seconds ago in that hosted
session."""

from __future__ import annotations

from datetime import datetime, timedelta

__all__ = ["login_is_recent"]


def login_is_recent(auth_time: datetime, now: datetime, window: int) -> bool:
    """Whether a login at ``auth_time`` is at most ``window`` seconds before ``now`` (both
    timezone-aware)."""
    return now - auth_time <= timedelta(seconds=window)
