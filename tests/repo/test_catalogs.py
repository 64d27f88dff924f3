"""The catalogs are complete and current (docs/guides/languages.md): ``messages.pot`` holds
exactly the texts the sources mark, every ``.po`` holds exactly its ids, and German translates
every one (not fuzzy, the same placeholders). A new text in a template or a ``Text("…")`` fails
here until ``make i18n`` ran and the text is translated."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[2]
HOW = (
    "run `make i18n` (re-extracts adapters/i18n/locales/messages.pot and updates every .po),"
    " then translate the new entries in adapters/i18n/locales/de/LC_MESSAGES/messages.po"
)
_PLACEHOLDER = re.compile(r"%\(\w+\)s|\{\w+\}|<[^>]+>")


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("i18n_script", ROOT / "scripts" / "i18n.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _read(path: Path, locale: str | None = None) -> Catalog:
    with path.open("rb") as po:
        return read_po(po, locale=locale)


def _ids(catalog: Catalog) -> set[object]:
    return {m.id for m in catalog if m.id}


def test_the_pot_is_up_to_date_with_the_sources() -> None:
    script = _script()
    extracted = _ids(script.extract())
    shipped = _ids(_read(script.POT))
    assert extracted - shipped == set(), f"texts missing from messages.pot: {HOW}"
    assert shipped - extracted == set(), f"messages.pot has texts no source has: {HOW}"


def test_every_catalog_holds_exactly_the_pots_ids() -> None:
    script = _script()
    expected = _ids(_read(script.POT))
    for path in sorted(script.LOCALES.glob("*/LC_MESSAGES/messages.po")):
        assert _ids(_read(path)) == expected, f"{path.relative_to(ROOT)} is not current: {HOW}"


def _strings(message: object) -> list[str]:
    value = message.string  # type: ignore[attr-defined]
    return list(value) if isinstance(value, tuple) else [value]


def test_german_translates_every_text_with_the_same_placeholders_and_markup() -> None:
    catalog = _read(_script().LOCALES / "de" / "LC_MESSAGES" / "messages.po", "de")
    untranslated = [m.id for m in catalog if m.id and not all(_strings(m))]
    assert untranslated == [], f"untranslated German texts {untranslated}: {HOW}"
    fuzzy = [m.id for m in catalog if m.id and m.fuzzy]
    assert fuzzy == [], f"fuzzy German texts {fuzzy}: check them and drop the fuzzy flag"
    for message in catalog:
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        expected = sorted(_PLACEHOLDER.findall(ids[-1]))
        for text in _strings(message):
            assert sorted(_PLACEHOLDER.findall(text)) == expected, (
                f"{message.id!r}: the German text {text!r} must keep the placeholders and"
                f" markup {expected}"
            )
