"""Logging in: password login and registration, the MFA and passkey second steps, federated
logins, the hosted pages' sign-in and the one login refusal (sections 2, 10, 13); the tokens and
sessions it issues come from ``application.sessions``."""
