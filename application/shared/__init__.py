"""Helpers every capability may import: settings, value checks, ids and tokens, paging,
the login throttle, re-authentication, voiding of proofs and the user records' lookups."""
