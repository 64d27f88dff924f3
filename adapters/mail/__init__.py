"""``EmailSender`` adapters (docs/reference/accounts.md): ``console`` (development), ``smtp``
(aiosmtplib), and the choice between them by ``email.backend``."""
