"""``EmailSender`` adapters (contract section 9): ``console`` (development), ``smtp``
(aiosmtplib), and the choice between them by ``email.backend``."""
