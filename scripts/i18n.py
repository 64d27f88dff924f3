"""``make i18n``: extract ``messages.pot`` from the sources and update every ``.po`` catalog
(docs/guides/languages.md). What ``pybabel extract -F babel.cfg`` and ``pybabel update`` do,
with this project's keywords written down once (``KEYWORDS``), used by the catalog tests too.

Usage: ``python scripts/i18n.py`` (from the checkout's root). New message ids arrive in each
``.po`` with an empty translation; removed ones are dropped; nothing is matched fuzzily.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterable
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[1]
LOCALES = ROOT / "adapters" / "i18n" / "locales"
POT = LOCALES / "messages.pot"
KEYWORDS: dict[str, tuple[int, ...] | None] = {
    "_": None,
    "gettext": None,
    "ngettext": (1, 2),
    "Text": None,
    "N_": None,
}
"""``_("…")``, ``gettext``, ``ngettext`` (templates), ``Text("…")`` and ``N_("…")`` (Python;
``N_`` marks a text a template translates when it shows it)."""
SOURCES = ("application", "adapters", "entrypoints")


def _walked(directory: str) -> bool:
    """Babel's directory filter: only the source packages, no hidden or cache folder."""
    parts = Path(directory).relative_to(ROOT).parts
    return bool(parts) and parts[0] in SOURCES and not any(p.startswith((".", "_")) for p in parts)


def extract() -> Catalog:
    """The message ids of the sources (``babel.cfg``'s mapping, ``KEYWORDS``), without
    locations."""
    with (ROOT / "babel.cfg").open() as cfg:
        method_map, options_map = parse_mapping_cfg(cfg)
    catalog = Catalog(project="authsvc", charset="utf-8", fuzzy=False)
    found = extract_from_dir(str(ROOT), method_map, options_map, keywords=KEYWORDS,
                             comment_tags=("Translators:",), strip_comment_tags=True,
                             directory_filter=_walked)  # fmt: skip
    for _, _, message, comments, context in found:
        catalog.add(message, None, auto_comments=comments, context=context)
    return catalog


def ids(messages: Iterable[object]) -> set[object]:
    """The message ids (a str, or a tuple for a plural) of a catalog's messages."""
    return {m.id for m in messages if getattr(m, "id", "")}  # type: ignore[attr-defined]


def _po_bytes(catalog: Catalog, **options: bool) -> bytes:
    out = io.BytesIO()
    write_po(out, catalog, width=100, sort_output=True, **options)
    return out.getvalue()


def _read(path: Path, locale: str | None = None) -> Catalog:
    with path.open("rb") as po:
        return read_po(po, locale=locale)


def main() -> int:
    """Write ``messages.pot`` (when its ids changed) and update every ``<locale>/.po``."""
    template = extract()
    if not POT.exists() or ids(_read(POT)) != ids(template):
        POT.write_bytes(_po_bytes(template, no_location=True))
        print(f"wrote {POT.relative_to(ROOT)} ({len(ids(template))} messages)")
    template = _read(POT)
    for po_path in sorted(LOCALES.glob("*/LC_MESSAGES/messages.po")):
        locale = po_path.parents[1].name
        catalog = _read(po_path, locale)
        catalog.update(template, no_fuzzy_matching=True)
        catalog.obsolete.clear()
        po_path.write_bytes(_po_bytes(catalog, no_location=True, ignore_obsolete=True))
        missing = [m.id for m in catalog if m.id and not m.string]
        left = "" if locale == "en" else f": {len(missing)} to translate"  # en: ids are the text
        print(f"updated {po_path.relative_to(ROOT)}{left}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
