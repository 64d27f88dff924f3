"""Pushed authorization requests (RFC 9126; docs/reference/oauth-and-oidc.md): a client posts its
authorization request's parameters to ``/oauth/par`` and gets a ``request_uri`` that stands for
them at ``/oauth/authorize``, once, for ``REQUEST_URI_TTL`` seconds."""

from __future__ import annotations

from datetime import datetime

import attrs

__all__ = ["REQUEST_URI_PREFIX", "REQUEST_URI_TTL", "PushedRequest"]

REQUEST_URI_PREFIX = "urn:ietf:params:oauth:request_uri:"
"""Every ``request_uri`` starts so (RFC 9126 §2.2); 256 random bits, base64url, follow."""
REQUEST_URI_TTL = 60
"""Seconds a ``request_uri`` works (RFC 9126 §2.2 ``expires_in``)."""


@attrs.frozen
class PushedRequest:
    """A pushed authorization request: ``uri_hash`` (SHA-256 hex of the whole ``request_uri``),
    the ``client_id`` that pushed it (only that client may use it), ``params`` (the request's
    (name, value) pairs in order, already checked like ``/oauth/authorize``'s), and its
    ``created_at`` / ``expires_at`` (aware UTC)."""

    uri_hash: str
    client_id: str
    params: tuple[tuple[str, str], ...]
    created_at: datetime
    expires_at: datetime
