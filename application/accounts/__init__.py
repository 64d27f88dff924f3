"""Accounts: users (list, show, role, org, lifecycle), groups and members, the operator's
command-line use cases (docs/reference/accounts.md)."""
