"""Prefix ``forward_auth`` (docs/reference/forward-auth.md): the hosts a login may send the browser
back to, the cookie domain of the protected hosts' browser session, and the access rules.
Validated at start and by a refresh; a bad value names its key."""

from __future__ import annotations

import re

import attrs
from attrs import validators as v

from domain.forward_auth import ForwardAuthRule
from domain.model import Role

__all__ = ["ForwardAuthSettings", "RuleSettings", "host_key"]

_LABEL = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"
_HOST = re.compile(rf"(?=[^:]{{1,253}}(:|$))({_LABEL})(\.{_LABEL})*(:[0-9]{{1,5}})?")
_DOMAIN = re.compile(rf"(?=.{{1,253}}$)({_LABEL})(\.{_LABEL})*")
_PATH = re.compile(r"/[\x21-\x7e]{0,1023}")
_GROUP = re.compile(r"[^\x00-\x1f\x7f]{1,128}")


def host_key(host: str) -> str:
    """A ``Host`` as the rules and ``hosts`` compare it: lower-case, a trailing dot of the name
    dropped."""
    name, colon, port = host.strip().lower().partition(":")
    return name.rstrip(".") + colon + port


def _port_ok(entry: str) -> bool:
    port = entry.partition(":")[2]
    return not port or 1 <= int(port) <= 65535


def _hosts(_: object, attribute: attrs.Attribute[tuple[str, ...]], value: tuple[str, ...]) -> None:
    for entry in value:
        if not _HOST.fullmatch(entry) or not _port_ok(entry):
            raise ValueError(
                f"'{attribute.name}' entries must be lower-case host names, optionally with"
                f" ':port', got {entry!r}"
            )


def _host(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not _HOST.fullmatch(value) or not _port_ok(value):
        raise ValueError(
            f"'{attribute.name}' must be a lower-case host name, optionally with ':port',"
            f" got {value!r}"
        )


def _cookie_domain(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    if value and not _DOMAIN.fullmatch(value):
        raise ValueError(f"'{attribute.name}' must be a lower-case domain name, got {value!r}")


def _roles(_: object, attribute: attrs.Attribute[tuple[str, ...]], value: tuple[str, ...]) -> None:
    known = {r.value for r in Role}
    for entry in value:
        if entry not in known:
            raise ValueError(
                f"'{attribute.name}' entries must be roles ({', '.join(sorted(known))}),"
                f" got {entry!r}"
            )


def _groups(
    instance: RuleSettings, attribute: attrs.Attribute[tuple[str, ...]], value: tuple[str, ...]
) -> None:
    for entry in value:
        if not _GROUP.fullmatch(entry):
            raise ValueError(f"'{attribute.name}' entries must be group names, got {entry!r}")
    if not value and not instance.roles:
        raise ValueError("a rule needs 'roles' or 'groups' (or both)")


@attrs.frozen
class RuleSettings:
    """One ``[[forward_auth.rules]]`` table: ``host`` (``host`` or ``host:port``), ``path_prefix``
    (default ``/``), ``roles`` (role names) and/or ``groups`` (group names of the user's
    organization): at least one of the two."""

    host: str = attrs.field(validator=_host)
    path_prefix: str = attrs.field(default="/", validator=v.matches_re(_PATH))
    roles: tuple[str, ...] = attrs.field(default=(), validator=_roles)
    groups: tuple[str, ...] = attrs.field(default=(), validator=_groups)

    def rule(self) -> ForwardAuthRule:
        """The rule as the policy reads it."""
        return ForwardAuthRule(self.host, self.path_prefix, self.roles, self.groups)


@attrs.frozen
class ForwardAuthSettings:
    """Prefix ``forward_auth``: ``hosts`` (``host`` or ``host:port`` entries a login may return
    to by an absolute ``return_to``; default none), ``cookie_domain`` (the domain of the
    protected hosts' session cookie, e.g. ``example.com``; empty: a host-only cookie of the
    service's own host), ``rules`` (``[[forward_auth.rules]]``, in order; default none: any
    signed-in user passes)."""

    hosts: tuple[str, ...] = attrs.field(default=(), validator=_hosts)
    cookie_domain: str = attrs.field(default="", validator=_cookie_domain)
    rules: tuple[RuleSettings, ...] = ()

    @property
    def domain_rules(self) -> tuple[ForwardAuthRule, ...]:
        """``rules`` as the policy reads them."""
        return tuple(r.rule() for r in self.rules)

    def returns_to(self, host: str) -> bool:
        """Whether a login may send the browser back to an absolute URL on ``host``."""
        return host_key(host) in self.hosts
