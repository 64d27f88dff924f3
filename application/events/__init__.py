"""The bottom package every capability may import: the events of docs/reference/operations.md
(``catalog``, ``clients``, ``consents``, ``passkeys``) and the audit log's writing side
(``audit``)."""
