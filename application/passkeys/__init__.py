"""Passkey registration, management, assertions and the WebAuthn settings (section 13)."""
