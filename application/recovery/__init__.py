"""Email verification and password reset, and the mail they send (contract section 9)."""
