"""Prefix ``oidc`` (docs/reference/oauth-and-oidc.md): the lifetimes of the OpenID Connect
provider's ID tokens, authorization codes, hosted sessions and device authorization requests."""

from __future__ import annotations

import attrs
from attrs import validators as v

__all__ = ["OidcSettings"]


@attrs.frozen
class OidcSettings:
    """``id_token_ttl`` (s, 1..3600, default 300): an ID token's ``exp - iat``.
    ``code_ttl`` (s, 1..600, default 60): how long an authorization code works (OAuth 2.1
    §4.1.2). ``session_idle_ttl`` (s, default 8 h) and ``session_ttl`` (s, default 30 days): a
    hosted session (the browser's login at the provider) ends after that long unused, and that
    long after its login at the latest. ``interaction_ttl`` (s, default 1800): how long a
    forced login (``prompt=login``, ``max_age``) may take before the request must start over.
    ``device_code_ttl`` (s, 10..3600, default 600): how long a device authorization request
    (RFC 8628 ``expires_in``) waits for the user.
    ``backchannel_retry_window`` (s, 60..604800, default 3600): how long a back-channel logout
    notice is retried (from 2 s apart, doubling) before it is given up."""

    id_token_ttl: int = attrs.field(default=300, validator=[v.ge(1), v.le(3600)])
    code_ttl: int = attrs.field(default=60, validator=[v.ge(1), v.le(600)])
    session_idle_ttl: int = attrs.field(default=28_800, validator=[v.ge(60), v.le(31_536_000)])
    session_ttl: int = attrs.field(default=2_592_000, validator=[v.ge(60), v.le(31_536_000)])
    interaction_ttl: int = attrs.field(default=1800, validator=[v.ge(60), v.le(86_400)])
    device_code_ttl: int = attrs.field(default=600, validator=[v.ge(10), v.le(3600)])
    backchannel_retry_window: int = attrs.field(default=3600, validator=[v.ge(60), v.le(604_800)])
