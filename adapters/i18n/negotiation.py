"""Which of the offered locales a request gets (docs/guides/languages.md): the OpenID Connect
``ui_locales`` of the authorization request first (OpenID Connect Core 1.0 §3.1.2.1: tags in
order of preference, separated by spaces), else the browser's ``Accept-Language`` (RFC 9110
§12.5.4, by weight), else the configured default. Babel's ``negotiate_locale`` matches a tag to
an offered locale (``de-AT`` → ``de``). Input that is not a language tag is ignored, never an
error.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from babel.core import negotiate_locale

__all__ = ["accept_language", "choose_locale", "html_lang", "ui_locales"]

_TAG = re.compile(r"[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*")
_WEIGHT = re.compile(r"q=(0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)", re.IGNORECASE)
_MAX_TAGS = 32
_MAX_HEADER = 1024


def accept_language(header: str | None) -> list[str]:
    """The language tags of an ``Accept-Language`` value, the most wanted first (a missing
    weight is 1; equal weights keep their order; weight 0 and ``*`` are left out). A malformed
    entry is skipped; a header longer than 1024 characters or with more than 32 entries is
    read no further."""
    if not header:
        return []
    weighted: list[tuple[float, int, str]] = []
    for index, item in enumerate(header[:_MAX_HEADER].split(",")[:_MAX_TAGS]):
        tag, _, params = item.strip().partition(";")
        tag = tag.strip()
        if not _TAG.fullmatch(tag):
            continue
        weight = 1.0
        if params:
            found = _WEIGHT.fullmatch(params.strip())
            if found is None:
                continue
            weight = float(found.group(1))
        if weight > 0:
            weighted.append((-weight, index, tag))
    return [tag for _, _, tag in sorted(weighted)]


def ui_locales(value: str | None) -> list[str]:
    """The tags of a ``ui_locales`` value (separated by spaces), in order; others skipped."""
    if not value:
        return []
    return [tag for tag in value[:_MAX_HEADER].split()[:_MAX_TAGS] if _TAG.fullmatch(tag)]


def _match(tags: Sequence[str], offered: Sequence[str]) -> str | None:
    preferred = [tag.replace("-", "_") for tag in tags]
    found = negotiate_locale(preferred, list(offered), sep="_")
    if found is None:
        return None
    by_lower = {locale.lower(): locale for locale in offered}
    return by_lower.get(found.lower())


def choose_locale(
    requested: str | None, accept: str | None, offered: Sequence[str], default: str
) -> str:
    """The locale (one of ``offered``) for a request: the first tag of ``requested`` (a
    ``ui_locales`` value) that matches one, else the best of ``accept`` (an
    ``Accept-Language`` value) that does, else ``default``."""
    return (
        _match(ui_locales(requested), offered)
        or _match(accept_language(accept), offered)
        or default
    )


def html_lang(locale: str) -> str:
    """The BCP 47 tag (``<html lang>``, ``Content-Language``) of a Babel locale: ``pt_BR`` →
    ``pt-BR``."""
    return locale.replace("_", "-")
