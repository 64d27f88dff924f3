"""Rows of ``passkeys`` and ``webauthn_ceremonies`` shared by the SQL passkey stores (SQLite,
PostgreSQL): column lists, reading a row, the parameters of a write."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from domain.passkeys import Ceremony, CeremonyKind, Passkey

PASSKEYS = (
    "id, user_id, credential_id, public_key, sign_count, aaguid, backup_eligible, backed_up,"
    " transports, name, created_at, last_used_at, suspected_clone"
)
"""The columns of ``passkeys`` in the order of ``Passkey``'s fields."""
PASSKEY_CHANGES = ("sign_count", "backed_up", "name", "last_used_at", "suspected_clone")
"""The columns ``PasskeyRepo.update`` writes."""
CEREMONIES = "id, kind, challenge, user_id, mfa_token_hash, created_at, expires_at"
"""The columns of ``webauthn_ceremonies`` in the order of ``Ceremony``'s fields."""


def passkey_row(row: Sequence[Any], when: Callable[[Any], datetime]) -> Passkey:
    """A ``Passkey`` from a row of ``PASSKEYS``; ``when`` converts a stored time."""
    (id_, user_id, credential_id, public_key, sign_count, aaguid, be, bs, transports, name,
     created_at, last_used_at, clone) = row  # fmt: skip
    return Passkey(
        id_, user_id, bytes(credential_id), bytes(public_key), int(sign_count), aaguid,
        bool(be), bool(bs), tuple(transports.split()), name, when(created_at),
        None if last_used_at is None else when(last_used_at), bool(clone),
    )  # fmt: skip


def passkey_params(p: Passkey, when: Callable[[datetime], Any]) -> tuple[Any, ...]:
    """The values of ``PASSKEYS`` for ``p``; ``when`` converts a time to its stored form."""
    return (
        p.id, p.user_id, p.credential_id, p.public_key, p.sign_count, p.aaguid,
        p.backup_eligible, p.backed_up, " ".join(p.transports), p.name, when(p.created_at),
        None if p.last_used_at is None else when(p.last_used_at), p.suspected_clone,
    )  # fmt: skip


def change_params(p: Passkey, when: Callable[[datetime], Any]) -> tuple[Any, ...]:
    """The values of ``PASSKEY_CHANGES`` for ``p``."""
    used = None if p.last_used_at is None else when(p.last_used_at)
    return (p.sign_count, p.backed_up, p.name, used, p.suspected_clone)


def use_params(p: Passkey, when: Callable[[datetime], Any]) -> tuple[Any, Any, Any]:
    """The new counter, backup state and last use of ``p`` for ``sql.passkeys.RECORD_USE``."""
    return (p.sign_count, p.backed_up, None if p.last_used_at is None else when(p.last_used_at))


def ceremony_row(row: Sequence[Any], when: Callable[[Any], datetime]) -> Ceremony:
    """A ``Ceremony`` from a row of ``CEREMONIES``."""
    id_, kind, challenge, user_id, mfa_hash, created_at, expires_at = row
    return Ceremony(id_, CeremonyKind(kind), bytes(challenge), user_id, mfa_hash,
                    when(created_at), when(expires_at))  # fmt: skip


def ceremony_params(c: Ceremony, when: Callable[[datetime], Any]) -> tuple[Any, ...]:
    """The values of ``CEREMONIES`` for ``c``."""
    return (c.id, c.kind.value, c.challenge, c.user_id, c.mfa_token_hash, when(c.created_at),
            when(c.expires_at))  # fmt: skip
