"""Prefix ``federation`` (docs/reference/federation.md): the identity providers users may sign in
with, one ``[[federation.providers]]`` table each. Validated at start and by a refresh; a bad value
names its key (``federation.providers``, entry and field)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import attrs
from attrs import validators as v

from domain.federation import GITHUB, OIDC, UpstreamProvider
from domain.oidc import loopback_http

__all__ = ["FederationSettings", "ProviderSettings", "loopback_http"]

PROVIDER_ID = re.compile(r"[a-z0-9-]{1,32}")
DEFAULT_SCOPES = ("openid", "email", "profile")
GITHUB_SCOPES = ("read:user", "user:email")
_DOMAIN = re.compile(r"(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}")
_SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,128}")


def _provider_url(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    """An ``https://`` URL with a host, or ``http://`` on a loopback host (tests); no query or
    fragment. Empty passes (``issuer`` of a GitHub provider)."""
    if value == "":
        return
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        raise ValueError(f"'{attribute.name}' must be a URL: {exc}") from None
    ok = (parts.scheme == "https" and bool(parts.hostname)) or loopback_http(value)
    if not ok or parts.query or parts.fragment or parts.username:
        raise ValueError(
            f"'{attribute.name}' must be an https:// URL (or http:// on a loopback host), "
            f"got {value!r}"
        )


def _scopes(_: object, attribute: attrs.Attribute[tuple[str, ...]], value: tuple[str, ...]) -> None:
    if len(value) > 32 or not all(_SCOPE.fullmatch(s) for s in value):
        raise ValueError(f"'{attribute.name}' must be at most 32 scope tokens (RFC 6749 §3.3)")


def _domains(
    _: object, attribute: attrs.Attribute[tuple[str, ...]], value: tuple[str, ...]
) -> None:
    for entry in value:
        if not _DOMAIN.fullmatch(entry):
            raise ValueError(
                f"'{attribute.name}' entries must be lower-case domain names, got {entry!r}"
            )


def _kind_fields(instance: ProviderSettings, attribute: attrs.Attribute[bool], value: bool) -> None:
    """An OIDC provider needs its ``issuer``; ``client_secret`` and ``client_secret_file`` are
    exclusive (one of them for GitHub, whose token endpoint always authenticates the client)."""
    if instance.kind == OIDC and not instance.issuer:
        raise ValueError("'issuer' must be set for kind oidc")
    if instance.client_secret and instance.client_secret_file:
        raise ValueError("'client_secret' must not be set with client_secret_file (one of them)")
    if instance.kind == GITHUB and not (instance.client_secret or instance.client_secret_file):
        raise ValueError("'client_secret' must be set for kind github (or client_secret_file)")


def _default_scopes(instance: Any) -> tuple[str, ...]:
    return GITHUB_SCOPES if instance.kind == GITHUB else DEFAULT_SCOPES


@attrs.frozen
class ProviderSettings:
    """One ``[[federation.providers]]`` table: ``id`` (``[a-z0-9-]{1,32}``, in the routes),
    ``name`` (the button's text: "Continue with {name}"), ``kind`` (``oidc`` | ``github``),
    ``issuer`` (OIDC; https, or http on a loopback host), ``client_id``, ``client_secret`` or
    ``client_secret_file`` (a file holding it, read on use), ``scopes`` (default ``openid email
    profile``; GitHub ``read:user user:email``), ``trust_email`` (default false: link an
    existing account on a verified email), ``create_users`` (default true), ``org_id`` (new
    users' organization; empty: ``auth.default_org_id``), ``allowed_domains`` (email domains of
    new users; empty: any), ``enabled`` (default true), ``github_url`` and ``github_api_url``
    (GitHub's web and API bases; for tests)."""

    id: str = attrs.field(validator=v.matches_re(PROVIDER_ID))
    name: str = attrs.field(validator=[v.min_len(1), v.max_len(64)])
    client_id: str = attrs.field(validator=[v.min_len(1), v.max_len(512)])
    kind: str = attrs.field(default=OIDC, validator=v.in_((OIDC, GITHUB)))
    issuer: str = attrs.field(default="", validator=_provider_url)
    client_secret: str = attrs.field(default="", repr=False, validator=v.max_len(4096))
    client_secret_file: str = ""
    scopes: tuple[str, ...] = attrs.field(
        default=attrs.Factory(_default_scopes, takes_self=True), validator=_scopes
    )
    trust_email: bool = False
    create_users: bool = True
    org_id: str = attrs.field(default="", validator=v.max_len(128))
    allowed_domains: tuple[str, ...] = attrs.field(default=(), validator=_domains)
    enabled: bool = attrs.field(default=True, validator=_kind_fields)
    github_url: str = attrs.field(default="https://github.com", validator=_provider_url)
    github_api_url: str = attrs.field(default="https://api.github.com", validator=_provider_url)

    def upstream(self) -> UpstreamProvider:
        """The provider as its client sees it (an OIDC issuer without its trailing ``/``
        stays as written: ``iss`` is compared exactly)."""
        issuer = self.issuer if self.kind == OIDC else self.github_url
        return UpstreamProvider(
            self.id, self.kind, issuer, self.client_id, self.client_secret,
            self.client_secret_file, self.scopes, self.github_url, self.github_api_url,
        )  # fmt: skip

    def allows_domain(self, email: str) -> bool:
        """Whether a new user with ``email`` may be created (``allowed_domains``)."""
        if not self.allowed_domains:
            return True
        return email.rpartition("@")[2].lower() in self.allowed_domains


def _providers(
    _: object,
    attribute: attrs.Attribute[tuple[ProviderSettings, ...]],
    value: tuple[ProviderSettings, ...],
) -> None:
    seen: set[str] = set()
    for number, provider in enumerate(value, start=1):
        if provider.id in seen:
            raise ValueError(
                f"'{attribute.name}' entry {number}: the id {provider.id!r} must be used once"
            )
        seen.add(provider.id)


@attrs.frozen
class FederationSettings:
    """Prefix ``federation``: ``providers`` (``[[federation.providers]]``, default none),
    ``state_ttl`` (s, 60..600, default 600: how long a started login may take),
    ``link_max_age`` (s, 60..86400, default 600: linking a provider from the account page needs
    a hosted login at most that old)."""

    providers: tuple[ProviderSettings, ...] = attrs.field(default=(), validator=_providers)
    state_ttl: int = attrs.field(default=600, validator=[v.ge(60), v.le(600)])
    link_max_age: int = attrs.field(default=600, validator=[v.ge(60), v.le(86_400)])

    def provider(self, provider_id: str) -> ProviderSettings | None:
        """The enabled provider ``provider_id``, or None (unknown or disabled: 404)."""
        for provider in self.providers:
            if provider.id == provider_id and provider.enabled:
                return provider
        return None

    def enabled(self) -> tuple[ProviderSettings, ...]:
        """The enabled providers, in configuration order (the login page's buttons)."""
        return tuple(p for p in self.providers if p.enabled)
