"""The gettext catalogs shipped in ``adapters/i18n/locales/`` (docs/guides/languages.md).

Each language is a ``<locale>/LC_MESSAGES/messages.po`` file, kept in git as text; there is no
compiled ``.mo`` file in the repository or the wheel (ADR 0045). A catalog is compiled in
memory with Babel's API the first time a page or mail asks for it, then kept. ``make i18n``
re-extracts ``messages.pot`` from the sources and updates every ``.po``.
"""

from __future__ import annotations

import functools
import io
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations

__all__ = ["DOMAIN", "LOCALES_DIR", "available", "translations"]

LOCALES_DIR = Path(__file__).parent / "locales"
"""The catalogs' folder: ``messages.pot`` and ``<locale>/LC_MESSAGES/messages.po``."""
DOMAIN = "messages"
"""The gettext domain (the catalogs' file name)."""


def catalog_path(locale: str) -> Path:
    """The ``.po`` file of ``locale`` (a Babel identifier: ``de``, ``pt_BR``)."""
    return LOCALES_DIR / locale / "LC_MESSAGES" / f"{DOMAIN}.po"


@functools.cache
def available() -> frozenset[str]:
    """The locales a catalog ships for (folders holding a ``messages.po``)."""
    return frozenset(p.parents[1].name for p in LOCALES_DIR.glob(f"*/LC_MESSAGES/{DOMAIN}.po"))


@functools.cache
def translations(locale: str) -> Translations:
    """The compiled catalog of ``locale`` (compiled once, then cached). Fuzzy entries are left
    out (the English message id shows instead). Raises ``LookupError`` for a locale without a
    catalog (``available()``): the settings refuse such a locale at start."""
    if locale not in available():
        raise LookupError(f"no catalog for the locale {locale!r}")
    with catalog_path(locale).open("rb") as po:
        catalog = read_po(po, locale=locale, domain=DOMAIN)
    mo = io.BytesIO()
    write_mo(mo, catalog, use_fuzzy=False)
    mo.seek(0)
    return Translations(mo, domain=DOMAIN)
