"""The gettext functions a template calls (docs/guides/languages.md), bound to one catalog.

Jinja's i18n extension (``jinja2.ext.i18n``, new style) compiles ``{{ _("…") }}`` and
``{% trans %}…{% endtrans %}`` into calls to ``gettext`` / ``ngettext`` looked up in the
template's context. Rendering passes the functions of the request's catalog in that context,
so one shared environment renders each request in its own language (nothing global changes
between requests). Like Jinja's own new-style functions: under autoescaping the translation
is markup and the ``%(name)s`` values are escaped into it.
"""

from __future__ import annotations

from collections.abc import Callable
from gettext import NullTranslations
from typing import Any

from jinja2 import pass_context
from jinja2.runtime import Context
from markupsafe import Markup

__all__ = ["gettext_functions"]


def gettext_functions(translations: NullTranslations) -> dict[str, Callable[..., Any]]:
    """``{"gettext", "ngettext", "_"}`` translating through ``translations``, for a template's
    context."""

    @pass_context
    def gettext(context: Context, message: str, /, **variables: Any) -> str:
        text = translations.gettext(message)
        if context.eval_ctx.autoescape:
            text = Markup(text)  # noqa: S704 - the catalog is ours, trusted like a template
        return text % variables

    @pass_context
    def ngettext(context: Context, singular: str, plural: str, num: int, /,
                 **variables: Any) -> str:  # fmt: skip
        variables.setdefault("num", num)
        text = translations.ngettext(singular, plural, num)
        if context.eval_ctx.autoescape:
            text = Markup(text)  # noqa: S704 - the catalog is ours, trusted like a template
        return text % variables

    return {"gettext": gettext, "ngettext": ngettext, "_": gettext}
