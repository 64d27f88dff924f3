"""Logging in and staying logged in: password login and registration, tokens and rotation,
sessions, the MFA and passkey second steps, the one login refusal (sections 2, 7, 10, 13)."""
