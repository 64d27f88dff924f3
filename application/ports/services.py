"""Ports of the services around the use cases: the event bus, email, the clock.
See ``application.ports`` for the conventions every port follows."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Protocol, TypeVar

import attrs

from application.events.catalog import Event
from domain.texts import Text

E = TypeVar("E", bound=Event)


EmailNormalizer = Callable[[str], str]
"""Checks an email's syntax and returns its canonical lower-case form; raises ``ValidationFailed``
naming the field ``email`` when the syntax is bad (docs/reference/tokens-and-sessions.md)."""


class EventBus(Protocol):
    """Publish/subscribe of application events. Subscribers' failures are logged, not raised.

    A bus for many instances (NATS, Redis) also sends each ``SharedEvent`` published here to the
    other instances, which deliver it to their subscribers with ``origin`` set (
    docs/reference/operations.md; ADR 0015)."""

    async def publish(self, event: Event) -> None:
        """Deliver ``event`` to every subscriber of its type (and of its base types).

        Never raises because of a subscriber.
        """
        ...

    def subscribe(
        self, event_type: type[E], handler: Callable[[E], Awaitable[None] | None]
    ) -> None:
        """Call ``handler`` (sync or async) for every published instance of ``event_type``."""
        ...


@attrs.frozen
class EmailMessage:
    """One message to send (docs/reference/accounts.md): ``to`` one address, a one-line ``subject``,
    a plain-text ``text`` body and an ``html`` alternative. ``kind`` (``verify`` | ``reset``)
    labels metrics and logs; ``link`` is the message's link, which holds a single-use token:
    adapters that log must not log it (the ``console`` backend excepted, for development)."""

    kind: str
    to: str
    subject: str
    text: str = attrs.field(repr=False)
    html: str = attrs.field(repr=False)
    link: str = attrs.field(repr=False)


@attrs.frozen
class MailDraft:
    """A message to write and send (docs/guides/email.md): ``kind`` names its two templates
    (``mail/<kind>.txt`` and ``mail/<kind>.html``) and labels metrics and logs; ``to`` one
    address; ``locale`` the language of the request that caused it (empty: the default);
    ``subject`` a ``Text`` translated in that language; ``link`` the link it carries (it may
    hold a single-use token: never logged); ``values`` what else its templates show (numbers
    and plain strings, e.g. ``ttl``: seconds the link works)."""

    kind: str
    to: str
    locale: str
    subject: Text
    link: str = attrs.field(repr=False)
    values: Mapping[str, object] = attrs.field(factory=dict, repr=False)


class MailTemplateError(Exception):
    """A message's templates are missing or cannot be rendered (a broken override in
    ``ui.templates_dir``). ``reason`` names the template and the failure, never a value."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class MailWriter(Protocol):
    """Writes a ``MailDraft`` into an ``EmailMessage`` in the draft's language: its subject,
    plain text and HTML (docs/guides/email.md)."""

    def write(self, draft: MailDraft) -> EmailMessage:
        """The message of ``draft``. Raises ``MailTemplateError``."""
        ...


class EmailNotSent(Exception):
    """The message could not be handed to the mail server (refused, unreachable, timed out).
    ``reason`` names the failure's kind without any part of the message."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class EmailSender(Protocol):
    """Hands messages to a mail transport (``email.backend``: console, smtp, none)."""

    async def send(self, message: EmailMessage) -> None:
        """Send ``message`` from the configured sender address. Raises ``EmailNotSent``."""
        ...


class Clock(Protocol):
    """The source of time."""

    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...
