"""``localized`` (docs/guides/languages.md): every ``Text`` a handler passes to a template is
translated, then filled; the values are inserted as they are, never read as a format."""

from __future__ import annotations

from typing import NamedTuple

from adapters.i18n.catalogs import translations
from domain.texts import Text
from entrypoints.http.language import localized


class Row(NamedTuple):
    label: str
    count: int


def test_texts_in_lists_and_tuples_are_translated_and_filled() -> None:
    gettext = translations("de").gettext
    nav = (("/ui/admin", Text("Dashboard")), ("/ui/admin/users", Text("Users")))
    assert localized(nav, gettext) == (("/ui/admin", "Übersicht"), ("/ui/admin/users", "Benutzer"))
    wait = Text("Too many failed attempts. Wait {seconds} seconds, then try again.", seconds=7)
    assert localized([wait, "as is"], gettext) == [
        "Zu viele Fehlversuche. Warten Sie 7 Sekunden und versuchen Sie es dann erneut.",
        "as is",
    ]
    row = Row("x", 1)
    assert localized(row, gettext) is row


def test_a_value_is_never_read_as_a_format() -> None:
    text = Text("Signing in with {name} did not work. Try again, or sign in another way.",
                name="{0.__class__} %(x)s {name}")  # fmt: skip
    assert localized(text, str) == (
        "Signing in with {0.__class__} %(x)s {name} did not work. Try again, or sign in another way."
    )
    assert str(Text("Unknown to the catalog")) == "Unknown to the catalog"
