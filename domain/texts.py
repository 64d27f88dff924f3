"""Texts shown to a person (docs/guides/languages.md): a ``Text`` is an English message id,
marked for extraction into the gettext catalogs (``make i18n``), translated where it is
shown — on a hosted page or in a mail, in the locale of the request — and only then filled.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Text"]


class Text:
    """A message id (English, with ``{name}`` placeholders, str.format style) and the values
    that fill it. ``Text("Wait {seconds} seconds.", seconds=30)``; Babel extracts the first
    argument of every ``Text(...)`` call (keyword ``Text`` in ``babel.cfg``'s run,
    ``make i18n``). The values are inserted after translation, never parsed as a format."""

    __slots__ = ("msgid", "params")

    def __init__(self, msgid: str, /, **params: object) -> None:
        self.msgid = msgid
        self.params = params

    def filled(self, **params: object) -> Text:
        """This message id with ``params`` (for a constant ``Text`` whose values come later)."""
        return Text(self.msgid, **params)

    def translated(self, gettext: Callable[[str], str]) -> str:
        """The message in the language of ``gettext`` (a catalog's ``gettext``), filled."""
        message = gettext(self.msgid)
        return message.format(**self.params) if self.params else message

    def __str__(self) -> str:
        """The English message, filled."""
        return self.translated(str)

    def __repr__(self) -> str:
        return f"Text({self.msgid!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Text) and (self.msgid, self.params) == (other.msgid, other.params)

    def __hash__(self) -> int:
        return hash(self.msgid)
