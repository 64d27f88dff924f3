"""Prefix ``ui`` (docs/reference/oauth-and-oidc.md): the hosted pages' branding."""

from __future__ import annotations

import attrs
from attrs import validators as v

from application.shared.settings import url_validator

__all__ = ["UiSettings"]


@attrs.frozen
class UiSettings:
    """``product_name`` (the pages' title), ``logo_url`` (an https or http URL, or empty for
    none), ``primary_color`` (``#rgb`` or ``#rrggbb``), ``templates_dir`` (a folder whose
    templates override the shipped ones, same names; empty: none), ``reauthentication_window``
    (s, 30..86400, default 300: how recent a login in the hosted session must be for the
    account page to add a factor, change the password or the email, or delete the account,
    docs/reference/accounts.md)."""

    product_name: str = attrs.field(default="authsvc", validator=[v.min_len(1), v.max_len(64)])
    logo_url: str = attrs.field(default="", validator=url_validator("https", "http", optional=True))
    primary_color: str = attrs.field(
        default="#1a56db", validator=v.matches_re(r"#[0-9a-fA-F]{3}([0-9a-fA-F]{3})?")
    )
    templates_dir: str = ""
    reauthentication_window: int = attrs.field(default=300, validator=[v.ge(30), v.le(86_400)])
