"""What every way of logging in (password, the MFA step, passkey; later federated logins) does
alike once the user has proved itself (docs/reference/accounts.md and docs/reference/operations.md
and docs/reference/mfa-and-passkeys.md): ask ``domain.login.login_refusal`` whether the account may
log in now, and on a refusal record one ``login.failed`` row — the refusal's code as its reason, the
factor used as its method — and raise that refusal (403 ``account_disabled`` /
``email_not_verified``).

``account_of`` names the account of an email tried in a failed or throttled login's audit row
(section 11); the login paths call it only once their answer is decided.
"""

from __future__ import annotations

from datetime import datetime
from typing import NoReturn

from application.events.audit import publish_failure
from application.events.catalog import LoginFailed
from application.ports import EventBus, Storage
from domain.login import LoginRefusal

__all__ = ["account_of", "refuse_login"]


async def refuse_login(
    storage: Storage,
    bus: EventBus,
    now: datetime,
    user_id: str,
    client: str,
    refusal: LoginRefusal,
    method: str,
) -> NoReturn:
    """Record and publish ``LoginFailed(user_id, client, refusal.code, method)`` (``method``:
    ``password``, ``totp``, ``recovery_code`` or ``passkey``), then raise ``refusal``. Call it
    after the login's transaction ended without a commit: nothing else was changed."""
    await publish_failure(storage, bus, now, LoginFailed(user_id, client, refusal.code, method))
    raise refusal


async def account_of(storage: Storage, canonical_email: str) -> str | None:
    """The id of the user with ``canonical_email`` (already normalized; "" for one that fails
    the syntax check), or None: one indexed read, the same for a known and an unknown email."""
    async with storage.read() as uow:
        user = await uow.users.get_by_email(canonical_email)
    return None if user is None else user.id
