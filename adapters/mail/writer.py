"""Writing a message from its templates (docs/guides/email.md): ``mail/<kind>.txt`` (plain
text) and ``mail/<kind>.html`` (autoescaped HTML), from ``ui.templates_dir`` when it holds
them, else the shipped ones (``adapters/mail/templates/mail/``); both rendered in the draft's
language with the catalogs of ``adapters.i18n``.

A template sees ``link`` (the message's link), ``lang`` (its BCP 47 tag), the draft's
``values`` (``ttl``: seconds the link works, for the shipped messages), ``duration(seconds)``
(a localized length: "30 minutes", "30 Minuten") and the gettext functions (``_``,
``{% trans %}``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jinja2
from babel.units import format_unit

from adapters.i18n.catalogs import available, translations
from adapters.i18n.jinja import gettext_functions
from adapters.i18n.negotiation import html_lang
from application.ports import EmailMessage, MailDraft, MailTemplateError, MailWriter

__all__ = ["SHIPPED", "TemplateMailWriter", "duration"]

SHIPPED = Path(__file__).parent / "templates"
"""The shipped mail templates' folder (its ``mail/`` holds ``<kind>.txt`` and ``<kind>.html``)."""
_UNITS = ((86_400, "duration-day"), (3_600, "duration-hour"), (60, "duration-minute"))


def duration(seconds: int, locale: str) -> str:
    """``seconds`` as words in ``locale``, in the largest unit that divides it exactly (days,
    hours, minutes; else seconds): 1800 → "30 minutes", in ``de`` "30 Minuten"."""
    for size, unit in _UNITS:
        if seconds >= size and seconds % size == 0:
            return str(format_unit(seconds // size, unit, length="long", locale=locale))
    return str(format_unit(seconds, "duration-second", length="long", locale=locale))


class TemplateMailWriter(MailWriter):
    """``MailWriter`` over Jinja templates (module docstring). ``templates_dir()`` is the
    ``ui.templates_dir`` in force (empty: none), ``offered()`` the ``ui.locales`` and
    ``default_locale()`` the ``ui.default_locale``: a draft in a locale not offered is
    written in the default one."""

    def __init__(self, templates_dir: Callable[[], str], offered: Callable[[], Sequence[str]],
                 default_locale: Callable[[], str]) -> None:  # fmt: skip
        self._templates_dir = templates_dir
        self._offered = offered
        self._default_locale = default_locale
        self._environments: dict[str, jinja2.Environment] = {}

    def _environment(self) -> jinja2.Environment:
        chosen = self._templates_dir()
        env = self._environments.get(chosen)
        if env is None:
            folders = [str(Path(chosen).expanduser())] if chosen else []
            env = jinja2.Environment(
                loader=jinja2.FileSystemLoader([*folders, str(SHIPPED)]),
                autoescape=jinja2.select_autoescape(["html"], default_for_string=False),
                extensions=["jinja2.ext.i18n"],
                undefined=jinja2.StrictUndefined,
                keep_trailing_newline=True,
            )
            env.install_null_translations(newstyle=True)  # type: ignore[attr-defined]
            self._environments = {chosen: env}  # one folder in force at a time
        return env

    def _locale(self, requested: str) -> str:
        offered = self._offered()
        if requested in offered and requested in available():
            return requested
        return self._default_locale()

    def write(self, draft: MailDraft) -> EmailMessage:
        """The message of ``draft``: its subject translated (one line), its two templates
        rendered in its locale. Raises ``MailTemplateError`` naming the template when one is
        missing or fails."""
        locale = self._locale(draft.locale)
        catalog = translations(locale)
        context: dict[str, Any] = {
            **draft.values,
            "link": draft.link,
            "lang": html_lang(locale),
            "duration": lambda seconds: duration(int(seconds), locale),
            **gettext_functions(catalog),
        }
        env = self._environment()
        bodies = []
        for suffix in ("txt", "html"):
            name = f"mail/{draft.kind}.{suffix}"
            try:
                bodies.append(env.get_template(name).render(context))
            except jinja2.TemplateError as exc:
                raise MailTemplateError(f"{name}: {type(exc).__name__}") from None
        subject = " ".join(draft.subject.translated(catalog.gettext).split())
        return EmailMessage(kind=draft.kind, to=draft.to, subject=subject, text=bodies[0],
                            html=bodies[1], link=draft.link)  # fmt: skip
