"""TOTP enrolment, confirmation, recovery codes and removal (docs/reference/mfa-and-passkeys.md)."""
