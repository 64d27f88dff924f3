"""Who passes forward auth (docs/reference/forward-auth.md): the first rule of
``[[forward_auth.rules]]`` that matches the forwarded request decides; no matching rule admits
any signed-in user. When rules exist but the request the proxy asks about is unknown (no
``X-Forwarded-Host`` from a trusted proxy), nobody passes: a rule must never be skipped because
a header was missing."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from domain.forward_auth import ForwardAuthRule, ForwardedRequest

__all__ = ["forward_auth_admits"]


def forward_auth_admits(
    rules: Sequence[ForwardAuthRule],
    target: ForwardedRequest | None,
    role: str,
    groups: Iterable[str],
) -> bool:
    """Whether a signed-in user with ``role`` and the group names ``groups`` may reach
    ``target`` (None: the proxy did not say, or is not trusted)."""
    if not rules:
        return True
    if target is None:
        return False
    for rule in rules:
        if rule.matches(target.host, target.path):
            return rule.admits(role, frozenset(groups))
    return True
