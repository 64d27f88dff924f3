"""The bottom package every capability may import: the events of contract section 6
(``catalog``, ``clients``, ``consents``, ``passkeys``) and the audit log's writing side
(``audit``)."""
