"""WebAuthn ceremonies on py_webauthn (docs/reference/mfa-and-passkeys.md)."""
