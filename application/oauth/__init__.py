"""OAuth 2.1 for machines: clients, client credentials, revocation, introspection, DPoP
(contract section 14)."""
