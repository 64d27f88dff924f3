"""OAuth 2.1 for machines: clients, client credentials, revocation, introspection, DPoP
(docs/reference/oauth-and-oidc.md)."""
