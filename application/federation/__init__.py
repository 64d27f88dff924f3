"""Login with other identity providers (docs/reference/federation.md): the providers' settings, the
identities of a user (list, unlink) and the linking rules' data."""
