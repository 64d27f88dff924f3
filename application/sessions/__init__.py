"""Sessions, below the capabilities (like ``shared/``; docs/adr/0038): token pairs and their
rotation (``tokens``, injected by the container), the sessions a user sees and ends (``manage``)
and the live hosted-session lookup (``hosted``). It imports no capability; the login and the
OpenID Connect provider build on it (docs/reference/tokens-and-sessions.md)."""
