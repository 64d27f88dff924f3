"""The test event brokers: URLs from ``AUTHSVC_TEST_NATS_URL`` and ``AUTHSVC_TEST_REDIS_URL``
(``.ci/run`` sets both); without one, the tests that need it skip with the reason below. Each
user takes a channel of its own, so tests running side by side never hear each other."""

from __future__ import annotations

import os
import secrets

import pytest

BROKER_ENV = {"nats": "AUTHSVC_TEST_NATS_URL", "redis": "AUTHSVC_TEST_REDIS_URL"}


def broker_url(backend: str) -> str | None:
    """The test broker's URL for ``backend`` (``nats`` or ``redis``), or None."""
    return os.environ.get(BROKER_ENV[backend]) or None


def require_broker(backend: str) -> str:
    """The broker's URL, or skip the test naming the variable that would enable it."""
    url = broker_url(backend)
    if url is None:
        pytest.skip(f"{BROKER_ENV[backend]} not set (no {backend} server to test against)")
    return url


def new_channel() -> str:
    """A fresh ``events.channel``."""
    return f"authsvc.test.{secrets.token_hex(6)}"


def new_kek() -> str:
    """A fresh key-encryption key, base64url (as the README says to make one)."""
    import base64

    return base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()


BROKERS = [
    pytest.param("nats", id="nats"),
    pytest.param("redis", id="redis"),
]
