"""WebAuthn ceremonies on py_webauthn (contract section 13)."""
