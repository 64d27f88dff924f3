"""docs/reference/configuration.md lists every key of every table the configuration loader reads
(``entrypoints.config.Config``: one attrs or dataclass settings class per prefix, and the
tables inside arrays such as ``[[oauth.resources]]``, written ``oauth.resources[].audience``)."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterator
from pathlib import Path

import attrs

from entrypoints.config import Config

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "configuration.md"


def _is_settings(cls: object) -> bool:
    return isinstance(cls, type) and (attrs.has(cls) or dataclasses.is_dataclass(cls))


def _names(cls: type) -> list[str]:
    if attrs.has(cls):
        return [field.name for field in attrs.fields(cls)]
    return [field.name for field in dataclasses.fields(cls)]


def keys(cls: type, prefix: str) -> Iterator[str]:
    """Every dotted key of ``cls`` under ``prefix``, nested settings classes included."""
    hints = typing.get_type_hints(cls)
    for name in _names(cls):
        key = f"{prefix}.{name}"
        yield key
        hint = hints[name]
        if _is_settings(hint):
            yield from keys(hint, key)
        for inner in typing.get_args(hint):
            if _is_settings(inner):
                yield from keys(inner, f"{key}[]")


def all_keys() -> list[str]:
    hints = typing.get_type_hints(Config)
    return [key for prefix in _names(Config) for key in keys(hints[prefix], prefix)]


def test_the_walk_finds_the_tables() -> None:
    found = all_keys()
    for key in ("auth.issuer", "actuator.show_details", "ui.primary_color",
                "oauth.resources[].audience", "federation.providers[].client_id"):  # fmt: skip
        assert key in found


def test_every_settings_key_is_in_the_configuration_reference() -> None:
    page = PAGE.read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip().strip("`") for line in page.splitlines()
            if line.startswith("| `")}  # fmt: skip
    missing = [key for key in all_keys() if key not in rows]
    assert missing == [], f"docs/reference/configuration.md has no row for {missing}"


def test_every_prefix_has_its_table_heading() -> None:
    page = PAGE.read_text(encoding="utf-8")
    for prefix in _names(Config):
        assert f"## `[{prefix}]`" in page, f"no section for [{prefix}]"
