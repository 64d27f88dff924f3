"""Prefix ``ui`` (docs/reference/oauth-and-oidc.md, docs/guides/languages.md): the hosted
pages' branding and languages."""

from __future__ import annotations

import attrs
from attrs import validators as v

from adapters.i18n.catalogs import available
from application.shared.settings import url_validator

__all__ = ["UiSettings"]


def _locales(_: object, attribute: attrs.Attribute[tuple[str, ...]],
             value: tuple[str, ...]) -> None:  # fmt: skip
    shipped = available()
    if not value:
        raise ValueError(f"'{attribute.name}' must list at least one locale")
    for locale in value:
        if locale not in shipped:
            raise ValueError(
                f"'{attribute.name}' entries must be locales with a catalog"
                f" ({', '.join(sorted(shipped))}), got {locale!r}"
            )
    if len(set(value)) != len(value):
        raise ValueError(f"'{attribute.name}' must not repeat a locale")


@attrs.frozen
class UiSettings:
    """``product_name`` (the pages' title), ``logo_url`` (an https or http URL, or empty for
    none), ``primary_color`` (``#rgb`` or ``#rrggbb``), ``templates_dir`` (a folder whose
    templates override the shipped ones, same names, pages and ``mail/*``; empty: none),
    ``reauthentication_window`` (s, 30..86400, default 300: how recent a login in the hosted
    session must be for the account page to add a factor, change the password or the email,
    or delete the account, docs/reference/accounts.md), ``locales`` (the languages offered,
    each a shipped catalog: ``en``, ``de``) and ``default_locale`` (one of them: when neither
    ``ui_locales`` nor ``Accept-Language`` matches). Raises ``ValueError`` for a locale without
    a catalog or a default not offered."""

    product_name: str = attrs.field(default="authsvc", validator=[v.min_len(1), v.max_len(64)])
    logo_url: str = attrs.field(default="", validator=url_validator("https", "http", optional=True))
    primary_color: str = attrs.field(
        default="#1a56db", validator=v.matches_re(r"#[0-9a-fA-F]{3}([0-9a-fA-F]{3})?")
    )
    templates_dir: str = ""
    reauthentication_window: int = attrs.field(default=300, validator=[v.ge(30), v.le(86_400)])
    locales: tuple[str, ...] = attrs.field(default=("en", "de"), validator=_locales)
    default_locale: str = "en"

    def __attrs_post_init__(self) -> None:
        if self.default_locale not in self.locales:
            raise ValueError(
                f"'default_locale' must be one of 'locales' ({', '.join(self.locales)}),"
                f" got {self.default_locale!r}"
            )
