"""The language of a hosted page, and of a mail a request causes (docs/guides/languages.md).

``page_locale``: the ``ui_locales`` of the authorization request the page belongs to (its own
query's ``ui_locales``, or that of its ``return_to``, which carries the authorization request
from the login page through the second step to the consent page), else the browser's
``Accept-Language``, else ``ui.default_locale``; always one of ``ui.locales``.
``request_locale``: for the JSON API (no authorization request): ``Accept-Language``, else
the default. ``localized`` translates the ``Text`` values a handler passes to a template.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from aiohttp import web

from adapters.i18n.negotiation import choose_locale
from domain.texts import Text
from entrypoints.http.keys import CONTAINER

__all__ = ["localized", "page_locale", "request_locale"]

_MAX_QUERY = 16_384


def _ui_locales_of(return_to: str | None) -> str | None:
    if not return_to or len(return_to) > _MAX_QUERY:
        return None
    values = parse_qs(urlsplit(return_to).query, max_num_fields=64).get("ui_locales")
    return values[0] if values else None


def page_locale(request: web.Request, return_to: str | None = None) -> str:
    """The locale (one of ``ui.locales``) of a page of ``request`` heading to ``return_to``
    (the page's own, when the handler has it from a form; else the query's)."""
    ui = request.app[CONTAINER].live_config().current.ui
    try:
        requested = request.query.get("ui_locales") or _ui_locales_of(
            return_to or request.query.get("return_to")
        )
    except ValueError:  # more parameters than a page's return_to carries: not a request's
        requested = None
    accept = request.headers.get("Accept-Language")
    return choose_locale(requested, accept, ui.locales, ui.default_locale)


def request_locale(request: web.Request) -> str:
    """The locale of a JSON API request (for the mail it causes): ``Accept-Language``, else
    ``ui.default_locale``."""
    ui = request.app[CONTAINER].live_config().current.ui
    return choose_locale(None, request.headers.get("Accept-Language"), ui.locales,
                         ui.default_locale)  # fmt: skip


def localized(value: Any, gettext: Callable[[str], str]) -> Any:
    """``value`` with every ``Text`` in it (itself, or inside plain lists and tuples)
    translated by ``gettext`` and filled; any other value as it is."""
    if isinstance(value, Text):
        return value.translated(gettext)
    if type(value) is list or type(value) is tuple:  # exactly: a named tuple stays as it is
        return type(value)(localized(item, gettext) for item in value)
    return value
