"""Forward auth for reverse proxies (docs/reference/forward-auth.md): the rules of
``[[forward_auth.rules]]`` and the request a proxy asks about. Which rule applies and whether it
admits the user is the policy's (``domain.policy.forward_auth``).

Pure values: the standard library and attrs only."""

from __future__ import annotations

import attrs

__all__ = ["ForwardAuthRule", "ForwardedRequest"]


@attrs.frozen
class ForwardedRequest:
    """The request a proxy asks about, from its ``X-Forwarded-*`` headers: ``host`` (lower-case,
    ``host`` or ``host:port`` as the browser sent it), ``path`` (the URI's path, without query),
    ``uri`` (the path with its query, as sent), ``proto`` (``http`` | ``https``), ``method``."""

    host: str
    path: str
    uri: str
    proto: str
    method: str

    @property
    def url(self) -> str:
        """The absolute URL the browser asked for: ``{proto}://{host}{uri}``."""
        return f"{self.proto}://{self.host}{self.uri}"


@attrs.frozen
class ForwardAuthRule:
    """One ``[[forward_auth.rules]]`` table: requests for ``host`` (``host`` or ``host:port``,
    lower-case) whose path starts with ``path_prefix`` at a segment boundary (``/admin`` and
    ``/admin/`` both match ``/admin`` and ``/admin/x``, not ``/administrator``) admit a user
    whose role is one of ``roles`` or who is a member of one of ``groups`` (group names of the
    user's organization). An empty ``roles`` or ``groups`` admits nobody by that criterion."""

    host: str
    path_prefix: str = "/"
    roles: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()

    def matches(self, host: str, path: str) -> bool:
        """Whether the rule is about a request for ``host`` and ``path``."""
        if host != self.host:
            return False
        prefix = self.path_prefix.rstrip("/")
        return not prefix or path == prefix or path.startswith(prefix + "/")

    def admits(self, role: str, groups: frozenset[str]) -> bool:
        """Whether a user with ``role`` in the groups named ``groups`` passes."""
        return role in self.roles or not groups.isdisjoint(self.groups)
