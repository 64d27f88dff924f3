"""Login with other identity providers (contract section 16): the providers' settings, the
identities of a user (list, unlink) and the linking rules' data."""
