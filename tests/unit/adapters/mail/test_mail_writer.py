"""Writing a mail from its templates (docs/guides/email.md): text and HTML in the draft's
language, the subject translated when the catalog has it, overrides from ``ui.templates_dir``,
a broken override refused with ``MailTemplateError`` naming the template and not the link."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapters.mail.writer import TemplateMailWriter, duration
from application.ports import MailTemplateError
from application.recovery.email_change import change_message, changed_notice
from application.recovery.invitation_mail import compose_invitation
from application.recovery.mail import RESET, VERIFY, compose
from application.shared.settings import EmailSettings
from domain.invitations import Invitation
from domain.model import Role

TOKEN = "tok_" + "y" * 39


def _writer(templates_dir: str = "", offered: tuple[str, ...] = ("en", "de"),
            default: str = "en") -> TemplateMailWriter:  # fmt: skip
    return TemplateMailWriter(lambda: templates_dir, lambda: offered, lambda: default)


def test_the_reset_mail_in_german_with_its_link_and_how_long_it_works() -> None:
    draft = compose(RESET, "a@example.com", TOKEN, 1800, EmailSettings(), "de")
    message = _writer().write(draft)
    assert message.subject == "Passwort zurücksetzen"
    assert "Der Link gilt 30 Minuten lang und nur einmal." in message.text
    assert draft.link in message.text and draft.link in message.html
    assert '<html lang="de">' in message.html and "30 Minuten" in message.html
    assert (message.kind, message.to, message.link) == (RESET, "a@example.com", draft.link)


def test_english_when_the_locale_is_empty_unknown_or_not_offered() -> None:
    for locale, offered in (("", ("en", "de")), ("xx", ("en", "de")), ("de", ("en",))):
        draft = compose(VERIFY, "a@example.com", TOKEN, 86_400, EmailSettings(), locale)
        message = _writer(offered=offered).write(draft)
        assert message.subject == "Confirm your email address"
        assert "The link works for 1 day and only once." in message.text


def test_a_configured_subject_is_sent_as_configured_in_every_language() -> None:
    settings = EmailSettings(reset_subject="Example: new password")
    message = _writer().write(compose(RESET, "a@example.com", TOKEN, 60, settings, "de"))
    assert message.subject == "Example: new password"
    assert "1 Minute" in message.text


def test_the_html_escapes_the_link_and_the_text_keeps_it_as_it_is() -> None:
    settings = EmailSettings(reset_url='https://app.example/r?t={token}&x="<b>"')
    message = _writer().write(compose(RESET, "a@example.com", TOKEN, 1800, settings))
    assert f'https://app.example/r?t={TOKEN}&x="<b>"' in message.text
    assert "<b>" not in message.html and f"t={TOKEN}&amp;x=&#34;&lt;b&gt;&#34;" in message.html


def test_templates_in_ui_templates_dir_override_the_shipped_ones(tmp_path: Path) -> None:
    (tmp_path / "mail").mkdir()
    (tmp_path / "mail" / "reset.txt").write_text(
        "{{ _('Reset your password') }}: {{ link }} ({{ duration(ttl) }})\n"
    )
    message = _writer(str(tmp_path)).write(
        compose(RESET, "a@example.com", TOKEN, 7200, EmailSettings(), "de")
    )
    assert message.text.startswith("Passwort zurücksetzen: http") and "(2 Stunden)" in message.text
    assert "Jemand hat verlangt" in message.html  # the HTML part not overridden: shipped


def test_a_broken_override_is_a_mail_template_error_naming_the_template(tmp_path: Path) -> None:
    (tmp_path / "mail").mkdir()
    (tmp_path / "mail" / "verify.html").write_text("{{ link }} {{ no_such_value.x }}")
    with pytest.raises(MailTemplateError) as caught:
        _writer(str(tmp_path)).write(compose(VERIFY, "a@example.com", TOKEN, 60, EmailSettings()))
    assert "mail/verify.html" in caught.value.reason and TOKEN not in caught.value.reason


def test_a_kind_without_templates_is_a_mail_template_error() -> None:
    draft = compose(VERIFY, "a@example.com", TOKEN, 60, EmailSettings())
    with pytest.raises(MailTemplateError, match=r"mail/nothing\.txt"):
        _writer().write(type(draft)(kind="nothing", to=draft.to, locale="", subject=draft.subject,
                                    link=draft.link))  # fmt: skip


@pytest.mark.parametrize(
    ("seconds", "locale", "words"),
    [
        (1800, "en", "30 minutes"),
        (86_400, "de", "1 Tag"),
        (604_800, "en", "7 days"),
        (3_600, "de", "1 Stunde"),
        (90, "en", "90 seconds"),
    ],
)
def test_duration_uses_the_largest_exact_unit(seconds: int, locale: str, words: str) -> None:
    assert duration(seconds, locale) == words


def test_the_email_change_link_and_the_notice_to_the_old_address_in_german() -> None:
    settings = EmailSettings(change_url="https://id.example/change?token={token}")
    link = _writer().write(change_message("new@example.com", TOKEN, 3600, settings, "de"))
    assert link.subject == "Bestätigen Sie Ihre neue E-Mail-Adresse"
    assert f"https://id.example/change?token={TOKEN}" in link.text
    assert "Der Link gilt 1 Stunde lang und nur einmal." in link.text
    notice = _writer().write(changed_notice("old@example.com", "n<e>w@example.com", settings, "de"))
    assert notice.subject == "Ihre E-Mail-Adresse wurde geändert"
    assert (notice.to, notice.link) == ("old@example.com", "")
    assert "wurde in n<e>w@example.com geändert" in notice.text
    assert "n&lt;e&gt;w@example.com" in notice.html and "n<e>w" not in notice.html


def test_the_invitation_in_german_names_its_organization_role_and_link() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    invitation = Invitation(id="inv_1", org_id="acme", email="bob@example.com", role=Role.ORG_ADMIN,
                            group_ids=(), invited_by="usr_1", created_at=now,
                            expires_at=now + timedelta(days=7), token_hash="h")  # fmt: skip
    draft = compose_invitation(invitation, TOKEN, "https://id.example", 604_800, "de")
    message = _writer().write(draft)
    assert message.subject == "Sie sind eingeladen, ein Konto anzulegen"
    assert "der Organisation acme als org_admin beizutreten" in message.text
    assert f"https://id.example/ui/invitation?token={TOKEN}" in message.text
    assert "7 Tage" in message.text and message.to == "bob@example.com"
