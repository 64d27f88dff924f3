"""A real SMTP server for the tests (aiosmtpd) on a free loopback port, collecting messages.

``smtp_server`` (a pytest fixture, re-exported by the conftests that need it) starts one per
test; ``SmtpSink.wait_for(to)`` waits for a message to arrive and returns it parsed, and
``token_of(message)`` takes the token out of its link.
"""

from __future__ import annotations

import asyncio
import email
import email.message
import email.policy
import re
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiosmtpd.controller import Controller

_TOKEN = re.compile(r"[?&]token=([A-Za-z0-9_-]+)")


def free_port() -> int:
    """A TCP port nobody listens on now (bound and released at once)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class SmtpSink:
    """aiosmtpd handler: keeps every message delivered to it (``messages``, parsed, in order).
    Written by the server's thread, read by the test's: list appends are atomic."""

    def __init__(self) -> None:
        self.messages: list[email.message.EmailMessage] = []
        self.envelopes: list[tuple[str, list[str]]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        """aiosmtpd's hook: store the message; answer 250."""
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(parsed, email.message.EmailMessage)
        self.messages.append(parsed)
        self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
        return "250 OK"

    def to(self, address: str) -> list[email.message.EmailMessage]:
        """The messages delivered to ``address`` so far."""
        return [m for m in self.messages if m["To"] == address]

    async def wait_for(
        self, address: str, count: int = 1, within: float = 10.0
    ) -> email.message.EmailMessage:
        """The ``count``-th message to ``address``, waiting up to ``within`` seconds for it
        (the server runs on its own thread: poll)."""
        async with asyncio.timeout(within):
            while len(self.to(address)) < count:
                await asyncio.sleep(0.02)
        return self.to(address)[count - 1]


def text_of(message: email.message.EmailMessage) -> str:
    """The plain-text part of ``message``."""
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())  # type: ignore[attr-defined]


def token_of(message: email.message.EmailMessage) -> str:
    """The token in the link of ``message``'s plain-text part."""
    found = _TOKEN.search(text_of(message))
    assert found, text_of(message)
    return found.group(1)


@pytest.fixture
async def smtp_server() -> AsyncIterator[tuple[SmtpSink, int]]:
    """A running aiosmtpd server on 127.0.0.1 and a free port: ``(sink, port)``."""
    sink = SmtpSink()
    port = free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    await asyncio.to_thread(controller.start)
    try:
        yield sink, port
    finally:
        await asyncio.to_thread(controller.stop)


def smtp_env(port: int) -> dict[str, str]:
    """Environment for the service to send through the test server on ``port`` (no TLS)."""
    return {
        "AUTHSVC_EMAIL__BACKEND": "smtp",
        "AUTHSVC_EMAIL__SMTP_HOST": "127.0.0.1",
        "AUTHSVC_EMAIL__SMTP_PORT": str(port),
        "AUTHSVC_EMAIL__SMTP_STARTTLS": "false",
        "AUTHSVC_EMAIL__SMTP_TIMEOUT": "5",
    }
