"""The hosted pages (docs/reference/oauth-and-oidc.md): sign-in, consent, recovery, passkeys,
federated sign-in and sign-out, with their templates."""
