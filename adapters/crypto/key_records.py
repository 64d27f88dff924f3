"""Signing-key records and their schedule: which key signs when, which keys still verify.

The key ring (``adapters.crypto.key_ring``) works over a ``SigningKeyStore``: the key files
(``adapters.crypto.keystore.KeyStore``, ``auth.key_store = "file"``) or a table of the
database (``adapters.crypto.db_keystore``, ``"database"``). Both keep, per key, a
``KeyRecord`` — public facts and times, no secret — and its private material, and both apply
changes through ``update(plan)``: the plan sees every record under the store's exclusive lock
(``flock``; an advisory lock or ``BEGIN IMMEDIATE`` in the database) and returns what to add and
change, so two instances never decide from the same stale view. See
``docs/adr/0015-keys-in-the-database-and-event-buses.md``.

A record's times (UTC) decide everything, so instances that read the same records agree without
talking to each other:

- ``activates_at``: the key may sign from then on (a rotated key is created
  ``auth.key_publish_ahead`` seconds ahead and published in the JWKS meanwhile);
- ``retired_at``: None, or the instant it stops signing for good (a rotation sets it to the
  successor's ``activates_at``);
- ``verify_until``: None while the key signs or may sign, else the instant after which no token
  it signed can be live (it stopped signing + ``access_token_ttl`` + ``leeway``); the key leaves
  the JWKS and verification then.

The **signing key** of algorithm A at ``now`` is, among the keys of A with ``activates_at <=
now`` and no ``retired_at`` at or before ``now``, the one activated last. Switching
``auth.algorithm`` away from A does not retire A's keys: it gives them a ``verify_until`` (so a
later switch back reuses the key, and its ``kid``), which activation clears.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol

import attrs


class KeyStoreError(RuntimeError):
    """A key store is unusable: a key file or the key directory (unreadable, corrupt, wrong
    owner/type), the key table (unreachable database), or a private key that cannot be
    decrypted (another ``auth.key_encryption_key``)."""


class KeyOperationRefused(Exception):
    """An operator's key operation is refused (unknown ``kid``, retiring the signing key ...).

    The message says why and what to do instead; nothing was changed."""


@attrs.frozen
class KeyRecord:
    """One signing key's public facts: ``kid`` (RFC 7638 thumbprint), ``alg`` (``RS256``,
    ``ML-DSA-65``, ``ML-DSA-87``), and the times of the module docstring (timezone-aware UTC).
    ``ref`` is where the store keeps its material (a file name; the kid in the database)."""

    kid: str
    alg: str
    created_at: datetime
    activates_at: datetime
    retired_at: datetime | None = None
    verify_until: datetime | None = None
    ref: str = ""

    def may_sign(self, alg: str, now: datetime) -> bool:
        """True if this key can sign tokens of ``alg`` at ``now``."""
        return (
            self.alg == alg
            and self.activates_at <= now
            and (self.retired_at is None or now < self.retired_at)
        )

    def published(self, now: datetime) -> bool:
        """True if this key is in the JWKS and verifies tokens at ``now``."""
        return self.verify_until is None or now < self.verify_until

    def state(self, alg: str, now: datetime, signing_kid: str | None) -> str:
        """``signing``, ``pending`` (published, signs later), ``verifying`` (no longer signs,
        its tokens may be live) or ``expired`` — as ``authsvc keys list`` shows it."""
        if self.kid == signing_kid:
            return "signing"
        if not self.published(now):
            return "expired"
        if self.alg == alg and self.activates_at > now and self.retired_at is None:
            return "pending"
        return "verifying"


@attrs.frozen
class NewKey:
    """A key to add: its ``record``, its public ``jwk`` (RFC 7517, with ``kid``) and its private
    ``material`` (PKCS#8 PEM for RS256, the 32-byte FIPS 204 seed for ML-DSA)."""

    record: KeyRecord
    jwk: dict[str, Any]
    material: bytes = attrs.field(repr=False)


@attrs.frozen
class KeyChanges:
    """What a plan asks the store to do: ``added`` keys and ``changed`` records (by ``kid``)."""

    added: tuple[NewKey, ...] = ()
    changed: tuple[KeyRecord, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.changed)


KeyPlan = Callable[[list[KeyRecord]], KeyChanges]
"""Decides changes from every record of the store, read under its exclusive lock."""

MakeKey = Callable[[str, datetime], NewKey]
"""``make(alg, activates_at)``: a freshly generated key (CPU work: RSA-3072 takes ~0.2-1 s)."""


class SigningKeyStore(Protocol):
    """Where the signing keys live; every method is synchronous and may block (disk, database).

    ``location`` names the store in messages (a directory, a database table; never a secret).
    """

    @property
    def location(self) -> str:
        """Where the keys are, for messages (no secret)."""
        ...

    def records(self) -> list[KeyRecord]:
        """Every key's record. Raises ``KeyStoreError`` if the store cannot be read."""
        ...

    def material(self, record: KeyRecord) -> bytes:
        """The private material of ``record`` (decrypted). Raises ``KeyStoreError`` when it is
        missing, corrupt or cannot be decrypted."""
        ...

    def update(self, plan: KeyPlan) -> list[KeyRecord]:
        """Run ``plan`` on every record under the store's exclusive lock, store what it returns
        (all of it or, on an error, nothing) and return every record afterwards. Raises
        ``KeyStoreError`` (store unusable) and whatever ``plan`` raises."""
        ...

    def new_material(self, alg: str) -> bytes:
        """Private material for a new key of ``alg`` (generated; the file store first adopts a
        key file of ``alg`` placed in its directory by hand). May block (RSA: ~0.2-1 s).
        Raises ``KeyStoreError`` for such a file that is corrupt."""
        ...


# --------------------------------------------------------------------------- the schedule


def signing_key(records: Iterable[KeyRecord], alg: str, now: datetime) -> KeyRecord | None:
    """The record of the key that signs ``alg`` tokens at ``now`` (see the module), or None."""
    candidates = [r for r in records if r.may_sign(alg, now)]
    return max(candidates, key=_activation_order, default=None)


def _activation_order(r: KeyRecord) -> tuple[datetime, datetime, str]:
    return (r.activates_at, r.created_at, r.kid)


def ordered_for_jwks(records: Iterable[KeyRecord], first: str | None) -> list[KeyRecord]:
    """``records`` in JWKS order: ``first`` (the signing kid), then the latest activated first
    (ties by kid) — the same order on every instance reading the same records."""
    rest = sorted((r for r in records if r.kid != first), key=_activation_order, reverse=True)
    head = [r for r in records if r.kid == first]
    return [*head[:1], *rest]


def plan_activation(alg: str | Sequence[str], now: datetime, span: int, make: MakeKey) -> KeyPlan:
    """Make ``alg`` (one algorithm, or every algorithm of ``auth.algorithms``) the signing
    algorithms at ``now`` (at start and on a change of ``auth.algorithm``/``auth.algorithms``):
    keys of other algorithms that could still sign stop at once and verify for ``span`` seconds
    more (the longest token lifetime + leeway, the longer of old and new settings); each listed
    algorithm's signing key, if it was switched away from earlier, signs again (its ``kid``
    stays); a listed algorithm without one gets one, signing at once. A pending retirement of a
    listed algorithm's keys verifies ``span`` s past it."""
    algs = (alg,) if isinstance(alg, str) else tuple(alg)
    until = now + timedelta(seconds=span)

    def plan(records: list[KeyRecord]) -> KeyChanges:
        changed = [
            attrs.evolve(r, verify_until=until)
            for r in records
            if r.alg not in algs and r.verify_until is None
        ]
        added = []
        for a in algs:
            changed.extend(_extended_retirements(records, a, now, span))
            current = signing_key(records, a, now)
            if current is None:
                added.append(make(a, now))
            elif current.verify_until is not None and current.retired_at is None:
                changed.append(attrs.evolve(current, verify_until=None))  # switched back to it
        return KeyChanges(tuple(added), tuple(changed))

    return plan


def _extended_retirements(
    records: Iterable[KeyRecord], alg: str, now: datetime, span: int
) -> list[KeyRecord]:
    """Keys of ``alg`` that stop signing later: their tokens live ``span`` s past that instant
    (a longer ``access_token_ttl`` applies to what they sign until then)."""
    out = []
    for r in records:
        if r.alg != alg or r.retired_at is None or r.retired_at <= now:
            continue
        until = r.retired_at + timedelta(seconds=span)
        if r.verify_until is None or r.verify_until < until:
            out.append(attrs.evolve(r, verify_until=until))
    return out


def plan_rotation(
    alg: str,
    now: datetime,
    publish_ahead: int,
    span: int,
    make: MakeKey,
    *,
    due_after: int | None = None,
) -> KeyPlan:
    """Add a key of ``alg`` that signs from ``now + publish_ahead`` (published at once); every
    key of ``alg`` that could sign before then stops at that instant and verifies ``span`` s
    more. With ``due_after`` (s; the scheduled rotation) nothing happens unless the newest key of
    ``alg`` was created at least that long ago — decided under the store's lock, so of many
    instances one rotates."""
    switch = now + timedelta(seconds=publish_ahead)

    def plan(records: list[KeyRecord]) -> KeyChanges:
        live = [
            r
            for r in records
            if r.alg == alg and r.published(now) and (r.retired_at is None or r.retired_at > now)
        ]
        if due_after is not None:
            newest = max((r.created_at for r in live), default=None)
            if newest is not None and newest + timedelta(seconds=due_after) > now:
                return KeyChanges()
        changed = [
            attrs.evolve(
                r,
                retired_at=switch,
                verify_until=max(switch, r.activates_at) + timedelta(seconds=span),
            )
            for r in live
            if r.activates_at <= switch and (r.retired_at is None or r.retired_at > switch)
        ]
        return KeyChanges((make(alg, switch),), tuple(changed))

    return plan


def plan_retirement(kid: str, alg: str | Sequence[str], now: datetime) -> KeyPlan:
    """Withdraw key ``kid`` now: it leaves the JWKS and verifies nothing more, so tokens it
    signed are refused at once (a compromised key). Refuses (``KeyOperationRefused``) an unknown
    kid, the key signing ``alg`` (or one of the algorithms ``alg``) now, and a pending key
    (rotate again instead)."""
    algs = (alg,) if isinstance(alg, str) else tuple(alg)

    def plan(records: list[KeyRecord]) -> KeyChanges:
        record = next((r for r in records if r.kid == kid), None)
        if record is None:
            raise KeyOperationRefused(f"no signing key with kid {kid}")
        current = signing_key(records, record.alg, now) if record.alg in algs else None
        if current is not None and current.kid == kid:
            raise KeyOperationRefused(
                f"key {kid} signs new tokens ({record.alg});"
                f" run `authsvc keys rotate --now --alg {record.alg}` first"
            )
        if record.retired_at is None and record.activates_at > now:
            raise KeyOperationRefused(
                f"key {kid} is pending (it signs from {record.activates_at.isoformat()});"
                " rotate again to replace it"
            )
        if not record.published(now):
            return KeyChanges()
        retired = record.retired_at if record.retired_at and record.retired_at <= now else now
        return KeyChanges((), (attrs.evolve(record, retired_at=retired, verify_until=now),))

    return plan


def merge(records: Sequence[KeyRecord], changes: KeyChanges) -> list[KeyRecord]:
    """``records`` with ``changes`` applied (changed records replaced by kid, added appended)."""
    by_kid = {r.kid: r for r in changes.changed}
    out = [by_kid.get(r.kid, r) for r in records]
    out.extend(k.record for k in changes.added)
    return out


__all__ = [
    "KeyChanges",
    "KeyOperationRefused",
    "KeyPlan",
    "KeyRecord",
    "KeyStoreError",
    "MakeKey",
    "NewKey",
    "SigningKeyStore",
    "merge",
    "ordered_for_jwks",
    "plan_activation",
    "plan_retirement",
    "plan_rotation",
    "signing_key",
]
