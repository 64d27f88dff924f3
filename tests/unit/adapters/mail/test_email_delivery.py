"""Email delivery (docs/reference/accounts.md): the SMTP sender against a real SMTP server
(aiosmtpd), its failures, the console sender, the outbox (background, counted, drained) and the
``email`` settings' validation."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import attrs
import pytest

from adapters.events.inprocess import InProcessEventBus
from adapters.mail.console import ConsoleEmailSender
from adapters.mail.smtp import ConfiguredEmailSender, SmtpEmailSender
from adapters.mail.writer import TemplateMailWriter
from adapters.metrics import ServiceMetrics
from application.ports import EmailMessage, EmailNotSent, EmailSender, MailDraft
from application.recovery.mail import Outbox, compose
from application.shared.settings import EmailSettings, Live
from entrypoints.config import ConfigError, load_config
from service_actuator.metrics import new_registry
from tests.smtp import SmtpSink, free_port, smtp_server, text_of

__all__ = ["smtp_server"]

TOKEN = "tok_" + "x" * 39
WRITER = TemplateMailWriter(lambda: "", lambda: ("en", "de"), lambda: "en")


def _smtp_settings(port: int, **kw: object) -> EmailSettings:
    return EmailSettings(
        backend="smtp", smtp_host="127.0.0.1", smtp_port=port, smtp_starttls=False,
        smtp_timeout=5, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def _draft(settings: EmailSettings, kind: str = "reset") -> MailDraft:
    return compose(kind, "alice@example.com", TOKEN, 1800, settings)


def _message(settings: EmailSettings, kind: str = "reset") -> EmailMessage:
    return WRITER.write(_draft(settings, kind))


def test_compose_fills_the_link_template_subject_and_both_bodies() -> None:
    settings = EmailSettings(
        reset_url="https://app.example/reset#t={token}&x=<b>", reset_subject="Reset it"
    )
    message = _message(settings)
    assert message.link == f"https://app.example/reset#t={TOKEN}&x=<b>"
    assert message.subject == "Reset it"
    assert message.link in message.text and "30 minutes" in message.text
    assert f"https://app.example/reset#t={TOKEN}&amp;x=&lt;b&gt;" in message.html
    assert "<b>" not in message.html.replace("<p>", "")
    verify = _message(EmailSettings(), "verify")
    assert verify.link == f"http://localhost:8080/ui/verify?token={TOKEN}"
    assert verify.subject == EmailSettings().verify_subject


async def test_smtp_sender_delivers_a_multipart_message(
    smtp_server: tuple[SmtpSink, int],
) -> None:
    sink, port = smtp_server
    settings = _smtp_settings(port, from_address="noreply@auth.example")
    await SmtpEmailSender(Live(settings)).send(_message(settings))
    received = await sink.wait_for("alice@example.com")
    assert received["From"] == "noreply@auth.example"
    assert received["Subject"] == settings.reset_subject
    assert received["Message-ID"]
    assert received.get_content_type() == "multipart/alternative"
    assert TOKEN in text_of(received)
    html = received.get_body(preferencelist=("html",))
    assert html is not None and TOKEN in html.get_content()  # type: ignore[attr-defined]
    assert sink.envelopes == [("noreply@auth.example", ["alice@example.com"])]


async def test_smtp_sender_raises_email_not_sent_without_the_link_when_nobody_listens() -> None:
    port = free_port()
    settings = _smtp_settings(port)
    with pytest.raises(EmailNotSent) as caught:
        await SmtpEmailSender(Live(settings)).send(_message(settings))
    assert str(port) in caught.value.reason
    assert TOKEN not in caught.value.reason


async def test_starttls_is_required_when_configured(smtp_server: tuple[SmtpSink, int]) -> None:
    """The test server offers no STARTTLS: with ``smtp_starttls`` on, nothing goes in clear."""
    sink, port = smtp_server
    settings = attrs.evolve(_smtp_settings(port), smtp_starttls=True)
    with pytest.raises(EmailNotSent):
        await SmtpEmailSender(Live(settings)).send(_message(settings))
    assert sink.messages == []


async def test_console_sender_logs_the_message_with_its_link(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="authsvc.email")
    await ConsoleEmailSender("noreply@auth.example").send(_message(EmailSettings()))
    [record] = caplog.records
    assert TOKEN in record.getMessage() and "alice@example.com" in record.getMessage()


async def test_configured_sender_follows_the_backend_in_force() -> None:
    class Keep(EmailSender):
        def __init__(self) -> None:
            self.count = 0

        async def send(self, message: EmailMessage) -> None:
            self.count += 1

    live = Live(EmailSettings())
    console, smtp = Keep(), Keep()
    sender = ConfiguredEmailSender(live, console, smtp)
    await sender.send(_message(live.current))
    live.replace(_smtp_settings(25))
    await sender.send(_message(live.current))
    assert (console.count, smtp.count) == (1, 1)
    live.replace(EmailSettings(backend="none"))
    with pytest.raises(EmailNotSent):
        await sender.send(_message(live.current))


async def test_outbox_counts_a_failure_and_logs_it_without_the_token(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    bus = InProcessEventBus()
    metrics = ServiceMetrics(new_registry()).subscribe(bus)
    settings = Live(_smtp_settings(free_port()))
    outbox = Outbox(SmtpEmailSender(settings), bus, settings, WRITER)
    outbox.post(_draft(settings.current), "user-1")
    outbox.post(_draft(settings.current, "verify"), "user-1")
    await outbox.drain(10)
    assert metrics.emails_sent.labels("reset", "failed")._value.get() == 1  # type: ignore[attr-defined]
    assert metrics.emails_sent.labels("verify", "failed")._value.get() == 1  # type: ignore[attr-defined]
    assert metrics.emails_sent.labels("reset", "sent")._value.get() == 0  # type: ignore[attr-defined]
    assert any("not sent" in r.getMessage() for r in caplog.records)
    assert all(TOKEN not in r.getMessage() for r in caplog.records)


async def test_outbox_post_returns_before_the_message_is_sent() -> None:
    release = asyncio.Event()

    class Slow(EmailSender):
        done = False

        async def send(self, message: EmailMessage) -> None:
            await release.wait()
            Slow.done = True

    outbox = Outbox(Slow(), InProcessEventBus(), Live(EmailSettings()), WRITER)
    outbox.post(_draft(EmailSettings()), "user-1")
    await asyncio.sleep(0)
    assert not Slow.done
    release.set()
    await outbox.drain(5)
    assert Slow.done


async def test_drain_gives_up_after_its_grace_period(caplog: pytest.LogCaptureFixture) -> None:
    class Stuck(EmailSender):
        async def send(self, message: EmailMessage) -> None:
            await asyncio.Event().wait()

    outbox = Outbox(Stuck(), InProcessEventBus(), Live(EmailSettings()), WRITER)
    outbox.post(_draft(EmailSettings()), "user-1")
    await outbox.drain(0.05)
    assert any("dropped" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("env", "key"),
    [
        ({"AUTHSVC_EMAIL__BACKEND": "carrier-pigeon"}, "email.backend"),
        ({"AUTHSVC_EMAIL__BACKEND": "smtp"}, "email.smtp_host"),
        ({"AUTHSVC_EMAIL__SMTP_PORT": "0"}, "email.smtp_port"),
        ({"AUTHSVC_EMAIL__SMTP_TIMEOUT": "0"}, "email.smtp_timeout"),
        ({"AUTHSVC_EMAIL__FROM_ADDRESS": "nobody"}, "email.from_address"),
        ({"AUTHSVC_EMAIL__FROM_ADDRESS": "a@b.example\nBcc: c@d.example"}, "email.from_address"),
        ({"AUTHSVC_EMAIL__RESET_URL": "https://app.example/reset"}, "email.reset_url"),
        ({"AUTHSVC_EMAIL__VERIFY_URL": "ftp://app.example/{token}"}, "email.verify_url"),
        ({"AUTHSVC_AUTH__PASSWORD_RESET_TTL": "0"}, "auth.password_reset_ttl"),
    ],
)
def test_bad_email_settings_are_refused_at_start(env: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(environ=env)
    assert caught.value.key == key


def test_a_link_template_with_another_placeholder_is_refused() -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(environ={"AUTHSVC_EMAIL__RESET_URL": "https://app.example/{user}/{token}"})
    assert "reset_url" in str(caught.value)


def test_the_smtp_password_is_never_shown() -> None:
    settings = load_config(
        environ={"AUTHSVC_EMAIL__SMTP_USERNAME": "u", "AUTHSVC_EMAIL__SMTP_PASSWORD": "hunter2"}
    ).email
    assert "hunter2" not in repr(settings)


async def test_a_message_whose_template_fails_is_counted_failed_and_logged_without_the_link(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """A broken override in ``ui.templates_dir`` fails that message in the background (the
    request that posted it is long answered): counted ``failed``, logged with the template's
    name, never the token; nothing reaches the sender."""
    caplog.set_level(logging.DEBUG)
    (tmp_path / "mail").mkdir()
    (tmp_path / "mail" / "reset.txt").write_text("{% if %}")
    bus = InProcessEventBus()
    metrics = ServiceMetrics(new_registry()).subscribe(bus)

    class Keep(EmailSender):
        sent: list[EmailMessage] = []

        async def send(self, message: EmailMessage) -> None:
            self.sent.append(message)

    writer = TemplateMailWriter(lambda: str(tmp_path), lambda: ("en",), lambda: "en")
    outbox = Outbox(Keep(), bus, Live(EmailSettings()), writer)
    outbox.post(_draft(EmailSettings()), "user-1")
    await outbox.drain(5)
    assert Keep.sent == []
    assert metrics.emails_sent.labels("reset", "failed")._value.get() == 1  # type: ignore[attr-defined]
    assert any("mail/reset.txt" in r.getMessage() for r in caplog.records)
    assert all(TOKEN not in r.getMessage() for r in caplog.records)
