"""The pure model of authsvc: users, roles, groups, refresh tokens and the rules on them.

Imports only the standard library and attrs; knows nothing of HTTP, SQL, JWT or key files.
"""
