"""Ports of the other records: second factors, groups, the audit log, OAuth clients, passkeys.
See ``application.ports`` for the conventions every port follows."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from domain.audit import AuditEvent, AuditQuery
from domain.clients import Client
from domain.model import (
    Group,
    GroupSummary,
    MfaChallenge,
    TotpCredential,
    User,
)
from domain.passkeys import Ceremony, Passkey


class MfaStore(Protocol):
    """Second factors (docs/reference/mfa-and-passkeys.md) inside one unit of work: each user's TOTP
    secret (sealed), its recovery codes (SHA-256 hashes, single use) and the pending second steps of
    logins (``mfa_token`` hashes). Deleting a user deletes all of it."""

    async def put_pending(self, user_id: str, sealed_secret: bytes, now: datetime) -> None:
        """Store a pending (unconfirmed) TOTP secret for the user, replacing an earlier
        pending one (``created_at`` = ``now``, ``last_step`` None).

        Raises ``Conflict`` if the user has a confirmed secret (MFA is on), ``NotFound`` if the
        user does not exist.
        """
        ...

    async def get_totp(self, user_id: str) -> TotpCredential | None:
        """The user's TOTP secret, pending or confirmed, or None. Raises ``ValidationFailed`` if
        the id cannot be looked up by the backend."""
        ...

    async def confirm(self, user_id: str, step: int, recovery_hashes: list[str]) -> bool:
        """Confirm the pending secret (MFA on): ``confirmed`` true, ``last_step`` = ``step``, and
        the user's recovery codes replaced by ``recovery_hashes``. False (and no change) if the
        user has no pending secret — none, or already confirmed."""
        ...

    async def replace_recovery_codes(self, user_id: str, recovery_hashes: list[str]) -> bool:
        """Replace the user's recovery codes by these hashes (the old ones stop working) when
        its secret is confirmed (MFA on); False, nothing changed, when it is not. The secret's
        row is locked meanwhile, so a concurrent removal either wins or waits."""
        ...

    async def claim_step(self, user_id: str, step: int) -> bool:
        """The one-use rule's compare-and-set: if the user's secret is confirmed and its
        ``last_step`` is None or older than ``step``, set it to ``step`` and return True; else
        False and no change. Atomic in the database (``UPDATE ... WHERE last_step < step``): of
        concurrent claims of one step in any process, exactly one succeeds."""
        ...

    async def use_recovery_code(self, user_id: str, code_hash: str) -> bool:
        """Delete the user's recovery code with this hash; True if it was there (single use;
        of concurrent uses in any process, at most one gets True)."""
        ...

    async def recovery_codes_left(self, user_id: str) -> int:
        """How many unused recovery codes the user has."""
        ...

    async def remove(self, user_id: str) -> bool:
        """Delete the user's TOTP secret (pending or confirmed), recovery codes and pending
        second steps; True if a confirmed secret was deleted (MFA was on)."""
        ...

    async def void_challenges(self, user_id: str) -> int:
        """Delete every pending second step (``mfa_token``) of the user, expired or not, and
        nothing else; returns how many went. A password change or reset, disabling and deleting
        void them (docs/reference/accounts.md)."""
        ...

    async def add_challenge(self, challenge: MfaChallenge) -> None:
        """Store a second step. Raises ``Conflict`` if the hash exists, ``NotFound`` if its user
        does not."""
        ...

    async def find_challenge(self, token_hash: str) -> MfaChallenge | None:
        """The second step with this hash (expired or not), or None; no change. Raises
        ``ValidationFailed`` if the hash cannot be looked up by the backend."""
        ...

    async def take_challenge(self, token_hash: str) -> MfaChallenge | None:
        """Atomically delete and return the second step with this hash, or None: of concurrent
        takes in any process at most one gets it (single use)."""
        ...

    async def claim_attempt(self, token_hash: str, max_attempts: int, now: datetime) -> int | None:
        """Claim one code evaluation on the second step before the code is checked (
        docs/reference/mfa-and-passkeys.md: count first, then check): atomically, if the step
        exists, is unexpired at ``now`` and has had fewer than ``max_attempts`` evaluations, add one
        to its ``failures`` and return the new number (1 .. ``max_attempts``); else None and no
        change. A single compare-and-set statement, so of any number of concurrent claims on one
        step, in any process or instance, at most ``max_attempts`` get a number."""
        ...

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete the second steps whose ``expires_at`` <= ``now``; returns how many went.
        At most ``limit`` rows of each table (all with None): housekeeping deletes in
        bounded batches, each in its own transaction.
        """
        ...


class GroupRepo(Protocol):
    """Groups and memberships, inside one unit of work. Names are unique per organization."""

    async def add(self, group: Group) -> None:
        """Insert.

        Raises ``Conflict`` if the org already has a group with this name or the id exists,
        ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def get(self, group_id: str) -> GroupSummary | None:
        """The group with its member count, or None.

        Raises ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def rename(self, group_id: str, name: str) -> None:
        """Rename.

        Raises ``NotFound``, ``Conflict`` on a duplicate name in the org, ``ValidationFailed`` if a
        value cannot be stored or looked up by the backend.
        """
        ...

    async def delete(self, group_id: str) -> bool:
        """Delete the group and its memberships; False if it did not exist.

        Raises ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def list_page(
        self, org_id: str | None, after: str | None, limit: int
    ) -> list[GroupSummary]:
        """Keyset page of groups with ``id > after`` ordered by id; ``org_id`` None = all orgs.

        Raises ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def add_member(self, group_id: str, user_id: str, now: datetime) -> bool:
        """Add a membership; idempotent. True if it was new.

        Raises ``NotFound`` for an unknown group or user, ``ValidationFailed`` if a value cannot be
        stored or looked up by the backend.
        """
        ...

    async def remove_member(self, group_id: str, user_id: str) -> bool:
        """Remove a membership; True if it existed.

        Raises ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def members(self, group_id: str) -> list[User]:
        """The group's members ordered by id (none for an unknown group).

        Raises ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def groups_of(self, user_id: str) -> list[str]:
        """Ids of the groups ``user_id`` belongs to, sorted.

        Raises ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def remove_user_from_org_groups(self, user_id: str, org_id: str) -> int:
        """Remove the user from every group of ``org_id``; returns how many memberships went.

        Raises ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...


class AuditLog(Protocol):
    """The audit log (docs/reference/operations.md) inside one unit of work: a row recorded here
    commits with the change it records, or neither does. Rows are never changed, only purged."""

    async def record(self, event: AuditEvent) -> None:
        """Store ``event``. When its ``org_id`` is None and its ``user_id`` names an existing
        user, the row takes that user's current organization (in the same statement). Raises
        ``Conflict`` if the id exists, ``ValidationFailed`` if a value cannot be stored."""
        ...

    async def list_page(
        self, query: AuditQuery, before: str | None, limit: int
    ) -> list[AuditEvent]:
        """Up to ``limit`` rows matching ``query`` with ``id < before`` (all if None), newest
        first (ids descending). Raises ``ValidationFailed`` if a value cannot be looked up."""
        ...

    async def purge_before(self, cutoff: datetime, limit: int | None = None) -> int:
        """Delete the rows that occurred before ``cutoff``; returns how many went.
        At most ``limit`` rows of each table (all with None): housekeeping deletes in
        bounded batches, each in its own transaction.
        """
        ...


class ClientRepo(Protocol):
    """OAuth clients (docs/reference/oauth-and-oidc.md) and the access tokens revoked before their
    ``exp`` (RFC 7009), inside one unit of work."""

    async def add(self, client: Client) -> None:
        """Insert. Raises ``Conflict`` if the id exists, ``ValidationFailed`` if a value cannot
        be stored."""
        ...

    async def get(self, client_id: str) -> Client | None:
        """The client, or None. Raises ``ValidationFailed`` if the id cannot be looked up."""
        ...

    async def update(self, client: Client) -> None:
        """Replace the stored client of ``client.id`` (every field). Raises ``NotFound`` if
        there is none, ``ValidationFailed`` if a value cannot be stored."""
        ...

    async def delete(self, client_id: str) -> bool:
        """Delete the client; False if it did not exist."""
        ...

    async def list_page(self, org_id: str | None, after: str | None, limit: int) -> list[Client]:
        """Keyset page of clients with ``id > after`` ordered by id; ``org_id`` None = all
        organizations."""
        ...

    async def revoke(self, jti: str, client_id: str, expires_at: datetime) -> None:
        """Record that the access token ``jti`` of ``client_id`` is revoked until
        ``expires_at`` (its ``exp``); idempotent."""
        ...

    async def is_revoked(self, jti: str) -> bool:
        """True if the access token ``jti`` was revoked (and the record not yet purged)."""
        ...

    async def purge_revoked(self, now: datetime, limit: int | None = None) -> int:
        """Delete the revocation records whose token has expired by ``now``, and the DPoP proof
        ids whose window has passed; how many went.
        At most ``limit`` rows of each table (all with None): housekeeping deletes in
        bounded batches, each in its own transaction.
        """
        ...

    async def claim_proof_jti(self, jti: str, expires_at: datetime) -> bool:
        """Remember the DPoP proof id ``jti`` until ``expires_at``; False if it was already
        remembered (a replay, RFC 9449 §11.1). Shared by every instance on the database."""
        ...


class PasskeyRepo(Protocol):
    """Passkeys, WebAuthn user handles and ceremonies (docs/reference/mfa-and-passkeys.md), inside
    one unit of work. Deleting a user deletes its passkeys and its handle."""

    async def add(self, passkey: Passkey) -> None:
        """Insert. Raises ``Conflict`` if the credential id (or our id) is registered already,
        ``NotFound`` if the user does not exist."""
        ...

    async def get(self, passkey_id: str) -> Passkey | None:
        """The passkey with our id ``passkey_id``, or None."""
        ...

    async def by_credential_id(self, credential_id: bytes) -> Passkey | None:
        """The passkey with the authenticator's ``credential_id``, or None."""
        ...

    async def list_for_user(self, user_id: str) -> list[Passkey]:
        """The user's passkeys, newest first (``created_at`` descending, then id)."""
        ...

    async def credential_id_lengths(self, limit: int) -> list[int]:
        """The byte lengths of the credential ids of up to ``limit`` stored passkeys (any of
        them: a sample for the decoys of ``docs/reference/mfa-and-passkeys.md``)."""
        ...

    async def update(self, passkey: Passkey) -> None:
        """Store the changeable fields of ``passkey`` (name, counter, last use, backup state,
        ``suspected_clone``). Raises ``NotFound`` if there is none."""
        ...

    async def record_use(self, used: Passkey, old_sign_count: int) -> bool:
        """A login with the passkey ``used.id``, by compare-and-set
        (docs/reference/mfa-and-passkeys.md): store ``used``'s ``sign_count``, ``backed_up`` (the BS
        flag) and ``last_used_at`` only if the stored counter is still ``old_sign_count`` and the
        passkey is not ``suspected_clone`` (``UPDATE ... WHERE sign_count = old``); nothing else of
        ``used``. True if stored; False if the counter moved or the passkey was flagged or deleted
        meanwhile (of two uses read at one counter, one wins)."""
        ...

    async def delete(self, passkey_id: str) -> bool:
        """Delete; False if it did not exist."""
        ...

    async def user_handle(self, user_id: str, new_handle: bytes) -> bytes:
        """The user's WebAuthn user handle: the stored one, or ``new_handle`` stored now."""
        ...

    async def user_for_handle(self, handle: bytes) -> str | None:
        """The user id of a user handle, or None."""
        ...

    async def put_ceremony(self, ceremony: Ceremony) -> None:
        """Store a ceremony. Raises ``Conflict`` if its id exists."""
        ...

    async def take_ceremony(self, ceremony_id: str) -> Ceremony | None:
        """Remove and return the ceremony (single use: a second take gets None)."""
        ...

    async def purge_expired(self, now: datetime, limit: int | None = None) -> int:
        """Delete the ceremonies expired by ``now``; how many went. At most ``limit`` rows (all
        with None): housekeeping deletes in bounded batches, each in its own transaction."""
        ...
