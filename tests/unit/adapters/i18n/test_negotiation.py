"""The locale of a request (docs/guides/languages.md): ``ui_locales`` beats ``Accept-Language``
beats the default; only offered locales come out; malformed input is ignored, never an error."""

from __future__ import annotations

import pytest

from adapters.i18n.negotiation import accept_language, choose_locale, html_lang, ui_locales

OFFERED = ("en", "de")


def test_ui_locales_beats_accept_language_which_beats_the_default() -> None:
    assert choose_locale("de", "en", OFFERED, "en") == "de"
    assert choose_locale(None, "de", OFFERED, "en") == "de"
    assert choose_locale(None, None, OFFERED, "de") == "de"
    assert choose_locale("", "", OFFERED, "en") == "en"


def test_the_first_offered_tag_of_ui_locales_wins() -> None:
    assert choose_locale("fr-CA fr de en", "en", OFFERED, "en") == "de"
    assert choose_locale("fr ja", "de", OFFERED, "en") == "de"  # none offered: Accept-Language


def test_accept_language_is_read_by_weight() -> None:
    assert accept_language("en;q=0.5, de-AT, fr;q=0.8") == ["de-AT", "fr", "en"]
    assert choose_locale(None, "fr;q=1, en;q=0.2, de;q=0.9", OFFERED, "en") == "de"
    assert choose_locale(None, "de;q=0, en;q=0.1", OFFERED, "de") == "en"  # q=0: not wanted


def test_a_regional_tag_matches_its_language() -> None:
    assert choose_locale("de-CH", None, OFFERED, "en") == "de"
    assert choose_locale(None, "DE-de", OFFERED, "en") == "de"


def test_only_offered_locales_come_out() -> None:
    assert choose_locale("de", "de", ("en",), "en") == "en"
    assert choose_locale(None, "pt-BR", ("en", "pt_BR"), "en") == "pt_BR"


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        ",,,",
        "*",
        "de;q=2",
        "de;q=abc",
        "de;x=1",
        "<script>",
        "d e",
        "de\x00",
        "ü",
        "a" * 5000,
        ",".join(["xx"] * 500),
        "de;q=0.5;q=1",
        "-de",
        "de-",
    ],
)
def test_malformed_values_are_ignored(garbage: str) -> None:
    assert choose_locale(garbage, garbage, OFFERED, "en") in OFFERED
    assert all(tag.isascii() for tag in accept_language(garbage) + ui_locales(garbage))


def test_malformed_entries_are_skipped_and_the_rest_read() -> None:
    assert accept_language("<x>, de;q=0.7, en;q=bad") == ["de"]
    assert ui_locales("<x> de") == ["de"]


def test_html_lang_is_the_bcp47_tag() -> None:
    assert html_lang("pt_BR") == "pt-BR" and html_lang("de") == "de"
