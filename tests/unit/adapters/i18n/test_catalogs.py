"""The shipped catalogs (docs/guides/languages.md, ADR 0045): compiled from the ``.po`` text at
first use; a locale without a catalog is refused; the templates' gettext functions escape the
values they fill in and leave the catalog's markup alone."""

from __future__ import annotations

import jinja2
import pytest

from adapters.i18n.catalogs import available, translations
from adapters.i18n.jinja import gettext_functions


def test_english_and_german_ship() -> None:
    assert {"en", "de"} <= available()
    assert translations("de").gettext("Sign in") == "Anmelden"
    assert translations("en").gettext("Sign in") == "Sign in"
    assert translations("de").ngettext("%(count)s passkey", "%(count)s passkeys", 2) == (
        "%(count)s Passkeys"
    )


def test_a_locale_without_a_catalog_is_refused() -> None:
    with pytest.raises(LookupError):
        translations("xx")


def test_gettext_functions_escape_the_values_and_keep_the_catalogs_markup() -> None:
    env = jinja2.Environment(autoescape=True, extensions=["jinja2.ext.i18n"])
    env.install_null_translations(newstyle=True)  # type: ignore[attr-defined]
    template = env.from_string(
        "{% trans %}<strong>The client secret, shown this once:</strong> copy it now.{% endtrans %}"
        "|{{ _('Signed in as %(email)s', email=email) }}|{{ _('Sign in') }}|"
        "{% trans count=n %}{{ count }} passkey{% pluralize %}{{ count }} passkeys{% endtrans %}"
    )
    html = template.render(email="<b>x</b>", n=3, **gettext_functions(translations("de")))
    assert html == (
        "<strong>Das Client-Secret, nur dieses eine Mal angezeigt:</strong> Kopieren Sie es jetzt."
        "|Angemeldet als &lt;b&gt;x&lt;/b&gt;|Anmelden|3 Passkeys"
    )
