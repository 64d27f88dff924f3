"""The ``User-Agent`` a session records (docs/reference/tokens-and-sessions.md): printable, at most
256 characters."""

from __future__ import annotations

from typing import Any, cast

from multidict import CIMultiDict

from entrypoints.http.requests import user_agent


class _Request:
    """The one attribute ``user_agent`` reads: ``headers`` (aiohttp decodes header bytes it
    cannot read as UTF-8 into lone surrogates)."""

    def __init__(self, value: str | None) -> None:
        self.headers = CIMultiDict() if value is None else CIMultiDict({"User-Agent": value})


def _ua(value: str | None) -> str | None:
    return user_agent(cast(Any, _Request(value)))


def test_absent_is_none_and_a_plain_one_is_kept() -> None:
    assert _ua(None) is None
    assert _ua("Mozilla/5.0 (X11; Linux) Ünïcode") == "Mozilla/5.0 (X11; Linux) Ünïcode"


def test_cut_to_256_characters() -> None:
    assert _ua("a" * 1000) == "a" * 256


def test_control_characters_and_undecodable_bytes_are_dropped() -> None:
    """Nothing a database refuses (U+0000, lone surrogates from undecodable bytes) is kept."""
    assert _ua("agent\x00/1\x07.0\udcff") == "agent/1.0"
