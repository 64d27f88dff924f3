"""Voiding a user's outstanding one-time proofs (docs/reference/accounts.md).

A password change, a password reset, disabling and deleting void every outstanding reset
token and every pending second step (``mfa_token``) of the user, in the transaction of the
change: an old reset link or an old ``mfa_token`` plus a code must not outlive the event that
was meant to lock the account down. Deleting gets this from the cascade of ``UserRepo.delete``.
"""

from __future__ import annotations

from application.ports import UnitOfWork
from domain.model import EmailTokenPurpose

__all__ = ["void_outstanding_proofs"]


async def void_outstanding_proofs(uow: UnitOfWork, user_id: str) -> None:
    """Delete, in ``uow``, every reset token (``EmailTokenStore.void``) and every ``mfa_token``
    (``MfaStore.void_challenges``) of ``user_id``. Verification tokens stay: they prove an
    address, not the account's owner."""
    await uow.email_tokens.void(user_id, EmailTokenPurpose.RESET)
    await uow.mfa.void_challenges(user_id)
