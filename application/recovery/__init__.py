"""Email verification and password reset, and the mail they send (docs/reference/accounts.md)."""
