"""Ports: the Protocols the use cases depend on. Adapters implement them and nothing else.

Each adapter names the port it implements as a base class (``class SqliteUserRepo(UserRepo)``),
so the type checker holds its signatures to the port's. Adapters translate their drivers' errors
(sqlite3, asyncpg, OpenSSL ...) into the errors named here before they cross the port; each
method's docstring lists every error an adapter may raise. All times are timezone-aware UTC
datetimes: a naive one is a programming error, which the SQL adapters refuse with ``ValueError``.

Storage comes in two ports: ``Storage`` is the backend with a lifetime (open, ping, close) that
``begin()``s units of work; a ``UnitOfWork`` is one transaction holding the repositories.

Storage faults (contract section 12, ADR 0014): every method of ``Storage.begin``, the
repositories, ``UnitOfWork.commit`` and ``LoginAttempts`` may also raise ``StorageFault``
(``domain.errors``) when the database cannot be reached or cannot write — the connection lost,
the server restarting or refusing connections, the disk full, the file read-only, a lock held
past the busy timeout. The unit of work it interrupts is rolled back, so nothing of it was
written, except that a connection lost during the commit itself leaves the outcome unknown.
Use cases let it through; the HTTP edge answers it 503 ``storage_unavailable`` with
``Retry-After``. The adapters heal by themselves: the first request after the fault ends works.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any, Protocol, TypeVar

import attrs

from application.events import Event
from domain.audit import AuditEvent, AuditQuery
from domain.clients import Client
from domain.model import (
    EmailToken,
    EmailTokenPurpose,
    Group,
    GroupSummary,
    MfaChallenge,
    RefreshToken,
    Role,
    Session,
    TotpCredential,
    User,
)
from domain.passkeys import Ceremony, Passkey

E = TypeVar("E", bound=Event)


class UserRepo(Protocol):
    """Users, inside one unit of work. Emails are stored and compared lower-case."""

    async def add(self, user: User) -> None:
        """Insert ``user``.

        Raises ``EmailTaken`` if the email (case-insensitive) exists, ``Conflict`` if the id
        exists, ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def get(self, user_id: str) -> User | None:
        """The user with this id, or None.

        Raises ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def get_with_groups(self, user_id: str) -> tuple[User, list[str]] | None:
        """The user with this id and the sorted ids of its groups, read by one statement (one
        consistent snapshot, one round trip), or None. Raises ``ValidationFailed`` if the id
        cannot be looked up by the backend."""
        ...

    async def get_by_email(self, email: str) -> User | None:
        """The user with this email (compared lower-case), or None.

        Raises ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def update(self, user: User) -> None:
        """Replace the stored user with the same id (email, hash, role, org, disabled,
        email_verified).

        Raises ``NotFound`` when no user has that id, ``EmailTaken`` when another user has the
        email, ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def list_page(self, org_id: str | None, after: str | None, limit: int) -> list[User]:
        """Keyset page: up to ``limit`` users with ``id > after`` (all if None), ordered by id.

        ``org_id`` None means every organization. Raises ``ValidationFailed`` if a value cannot be
        stored or looked up by the backend.
        """
        ...

    async def count_by_role(self, role: Role) -> int:
        """How many enabled users hold ``role`` (across organizations; disabled ones do not
        count: the last-superadmin rule is about who can still act)."""
        ...

    async def delete(self, user_id: str) -> bool:
        """Delete the user and everything hanging off it (sessions, refresh tokens and rotated
        records, memberships); False if there was no such user.

        Raises ``ValidationFailed`` if the id cannot be looked up by the backend.
        """
        ...


class TokenStore(Protocol):
    """Refresh tokens (stored by SHA-256 hash only) and the hashes of rotated ones."""

    async def add(self, token: RefreshToken) -> None:
        """Store a new live refresh token.

        Raises ``Conflict`` if the hash exists, ``NotFound`` if its user does not,
        ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def take(self, token_hash: str) -> RefreshToken | None:
        """Atomically delete and return the live token with this hash, or None.

        Of concurrent ``take`` calls for one hash (in any process), at most one gets the token
        (e.g. ``DELETE ... RETURNING``). Raises ``ValidationFailed`` if a value cannot be stored or
        looked up by the backend.
        """
        ...

    async def find(self, token_hash: str) -> RefreshToken | None:
        """The live token with this hash, or None (no change).

        Raises ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def remember_rotated(self, token: RefreshToken, rotated_at: datetime) -> None:
        """Remember a rotated token's hash (with its family) until its ``expires_at``, rotated at
        ``rotated_at`` and reused 0 times so far; replaces an earlier record of the same hash.

        Raises ``NotFound`` if its user does not exist, ``ValidationFailed`` if a value cannot be
        stored or looked up by the backend.
        """
        ...

    async def claim_reuse(
        self, token_hash: str, rotated_since: datetime, max_reuses: int
    ) -> RefreshToken | None:
        """The reuse interval's compare-and-set (contract section 2): if the rotated record of
        ``token_hash`` was rotated at or after ``rotated_since`` and has been reused fewer than
        ``max_reuses`` times, count one more reuse and return it; else None and no change.

        Atomic in the database (``UPDATE ... WHERE reuse_count < max RETURNING``): of
        concurrent claims in any process, at most ``max_reuses`` ever succeed for one hash.
        Raises ``ValidationFailed`` if a value cannot be looked up by the backend.
        """
        ...

    async def find_rotated(self, token_hash: str) -> RefreshToken | None:
        """The remembered rotated token with this hash, or None.

        Raises ``ValidationFailed`` if a value cannot be stored or looked up by the backend.
        """
        ...

    async def purge_expired(self, now: datetime) -> int:
        """Delete live and rotated records whose ``expires_at`` <= ``now``; returns the count."""
        ...


class SessionStore(Protocol):
    """Sessions (contract section 7): one record per refresh-token family, with the login's
    user agent and client address. ``last_used_at`` follows each token stored for the family
    (``TokenStore.add``) without a statement of its own. Ending a session deletes its record and
    its live tokens in the unit of work; its rotated records stay for reuse detection."""

    async def add(self, session: Session) -> None:
        """Store a new session (before its first token).

        Raises ``Conflict`` if the id exists, ``NotFound`` if its user does not,
        ``ValidationFailed`` if a value cannot be stored by the backend.
        """
        ...

    async def get(self, session_id: str) -> Session | None:
        """The session with this id (ended ones are gone), or None.

        Raises ``ValidationFailed`` if the id cannot be looked up by the backend.
        """
        ...

    async def list_live(self, user_id: str, now: datetime) -> list[Session]:
        """The user's live sessions, newest first (``created_at`` descending, then id): those
        whose ``expires_at`` is after ``now`` and that hold a live refresh token unexpired at
        ``now``. Raises ``ValidationFailed`` if the id cannot be looked up by the backend."""
        ...

    async def end(self, session_id: str) -> int:
        """End the session: delete its record and its live refresh tokens; returns how many
        tokens were deleted (0 for an unknown or ended session).

        Raises ``ValidationFailed`` if the id cannot be looked up by the backend.
        """
        ...

    async def end_all(self, user_id: str) -> list[str]:
        """End every session of the user (records and live tokens); returns the ids of the
        sessions ended, sorted. Raises ``ValidationFailed`` if the id cannot be looked up."""
        ...

    async def purge_expired(self, now: datetime) -> int:
        """Delete the records of sessions past their ``expires_at`` or without a live token
        (idle past ``auth.refresh_token_ttl``, or whose last token was purged); returns how many.
        """
        ...


class EmailTokenStore(Protocol):
    """Tokens sent by email (contract section 9), stored by SHA-256 hash only, inside one unit
    of work: password-reset and email-verification links."""

    async def add(self, token: EmailToken) -> None:
        """Store a new token.

        Raises ``Conflict`` if the hash exists, ``NotFound`` if its user does not,
        ``ValidationFailed`` if a value cannot be stored by the backend.
        """
        ...

    async def find(self, token_hash: str, purpose: EmailTokenPurpose) -> EmailToken | None:
        """The stored token with this hash and purpose (expired or not), or None; no change.

        Raises ``ValidationFailed`` if the hash cannot be looked up by the backend.
        """
        ...

    async def take(self, token_hash: str, purpose: EmailTokenPurpose) -> EmailToken | None:
        """Atomically delete and return the token with this hash and purpose, or None: of
        concurrent ``take`` calls for one hash (in any process) at most one gets it (single use).
        Raises ``ValidationFailed`` if the hash cannot be looked up by the backend."""
        ...

    async def void(self, user_id: str, purpose: EmailTokenPurpose) -> int:
        """Delete every token of ``user_id`` with this purpose; returns how many went.

        Raises ``ValidationFailed`` if the id cannot be looked up by the backend.
        """
        ...

    async def purge_expired(self, now: datetime) -> int:
        """Delete the tokens whose ``expires_at`` <= ``now``; returns how many went."""
        ...


class MfaStore(Protocol):
    """Second factors (contract section 10) inside one unit of work: each user's TOTP secret
    (sealed), its recovery codes (SHA-256 hashes, single use) and the pending second steps of
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

    async def count_failure(self, token_hash: str, max_failures: int) -> int | None:
        """Count one wrong code against the second step: its ``failures`` + 1, atomically; when
        that reaches ``max_failures`` the step is deleted (void). Returns the new count, or None
        if there is no such step."""
        ...

    async def purge_expired(self, now: datetime) -> int:
        """Delete the second steps whose ``expires_at`` <= ``now``; returns how many went."""
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
    """The audit log (contract section 11) inside one unit of work: a row recorded here commits
    with the change it records, or neither does. Rows are never changed, only purged."""

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

    async def purge_before(self, cutoff: datetime) -> int:
        """Delete the rows that occurred before ``cutoff``; returns how many went."""
        ...


class ClientRepo(Protocol):
    """OAuth clients (contract section 14) and the access tokens revoked before their ``exp``
    (RFC 7009), inside one unit of work."""

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

    async def purge_revoked(self, now: datetime) -> int:
        """Delete the revocation records whose token has expired by ``now``, and the DPoP proof
        ids whose window has passed; how many went."""
        ...

    async def claim_proof_jti(self, jti: str, expires_at: datetime) -> bool:
        """Remember the DPoP proof id ``jti`` until ``expires_at``; False if it was already
        remembered (a replay, RFC 9449 §11.1). Shared by every instance on the database."""
        ...


@attrs.frozen
class DpopProof:
    """A checked DPoP proof (RFC 9449 §4.3): ``jkt`` the RFC 7638 thumbprint of its key (what
    a token is bound to, ``cnf.jkt``), ``jti`` its unique id, ``iat`` its time (Unix s),
    ``nonce`` the server nonce it carries (RFC 9449 §8), if any."""

    jkt: str
    jti: str
    iat: int
    nonce: str | None = None


class DpopVerifier(Protocol):
    """Checks DPoP proofs (RFC 9449 §4.3) — everything but the replay of ``jti``, which needs
    storage (``ClientRepo.claim_proof_jti``)."""

    @property
    def algorithms(self) -> tuple[str, ...]:
        """The proof ``alg`` values accepted (asymmetric only), for the RFC 8414 metadata."""
        ...

    def verify(
        self,
        proof: str,
        method: str,
        urls: tuple[str, ...],
        now: datetime,
        window: int,
        *,
        access_token: str | None = None,
        jkt: str | None = None,
    ) -> DpopProof:
        """The checked proof: ``typ`` ``dpop+jwt``; ``alg`` one of ``algorithms``; a public
        ``jwk`` (no private members) that verifies the signature; ``htm`` = ``method``; ``htu``
        (without query and fragment) one of ``urls``; ``iat`` within ``window`` seconds of
        ``now``; a ``jti``. For a request to a resource with a bound token (RFC 9449 §7):
        ``access_token`` given → ``ath`` must be its base64url SHA-256; ``jkt`` given → the
        proof's key must have that thumbprint (the token's ``cnf.jkt``). Raises
        ``InvalidDpopProof`` naming the failed check."""
        ...


class PasskeyRepo(Protocol):
    """Passkeys, WebAuthn user handles and ceremonies (contract section 13), inside one unit of
    work. Deleting a user deletes its passkeys and its handle."""

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

    async def update(self, passkey: Passkey) -> None:
        """Store the changeable fields of ``passkey`` (name, counter, last use, backup state,
        ``suspected_clone``). Raises ``NotFound`` if there is none."""
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

    async def purge_expired(self, now: datetime) -> int:
        """Delete the ceremonies expired by ``now``; how many went."""
        ...


class UnitOfWork(Protocol):
    """One unit of work: the repositories below share one database transaction.

    Made by ``Storage.begin()``: ``async with storage.begin() as uow: ...; await uow.commit()``.
    ``commit()`` makes the changes so far durable and the unit goes on; leaving the context
    without ``commit()`` (by an exception, by cancellation) rolls back what was not committed.
    """

    users: UserRepo
    tokens: TokenStore
    sessions: SessionStore
    groups: GroupRepo
    email_tokens: EmailTokenStore
    mfa: MfaStore
    audit: AuditLog
    clients: ClientRepo
    passkeys: PasskeyRepo

    async def commit(self) -> None:
        """Make every change of this unit durable at once."""
        ...


class Storage(Protocol):
    """A storage backend (memory, SQLite, PostgreSQL) with a lifetime (``open`` ... ``close``);
    ``begin()`` starts each unit of work."""

    def begin(self) -> AbstractAsyncContextManager[UnitOfWork]:
        """Start a unit of work, one transaction (serialized with other writers as the backend
        requires). Raises ``RuntimeError`` if the backend needs ``open()`` and is not open."""
        ...

    def read(self) -> AbstractAsyncContextManager[UnitOfWork]:
        """Start a read-only unit of work: no transaction and no write lock, each statement
        sees what was committed when it ran (so a read needing one snapshot is one statement,
        e.g. ``UserRepo.get_with_groups``). Nothing is written through it and it needs no
        ``commit()``. Raises ``RuntimeError`` if the backend needs ``open()`` and is not open."""
        ...

    async def open(self) -> None:
        """Connect (pool, file) and apply pending migrations; does nothing if already open.

        Raises ``StorageUnavailable`` (an adapter error, not a domain one: its message names the
        setting, the location with any password hidden, and the reason) if the store cannot be
        reached or used.
        """
        ...

    async def close(self) -> None:
        """Release connections."""
        ...

    async def ping(self) -> None:
        """Check the database for readiness (contract section 12): a trivial query, answered
        within about a second. Raises on failure — the driver's error untranslated (the health
        indicator reports its class and message), or ``StorageFault`` while the backend knows
        it cannot write (e.g. SQLite after a full disk, until a probe write commits);
        ``RuntimeError`` if not open."""
        ...


class Hasher(Protocol):
    """Password hashing (bcrypt). Work runs off the event loop."""

    async def hash(self, password: str) -> str:
        """A new salted hash of ``password`` at the configured cost.

        Raises ``ValueError`` for a password over 72 UTF-8 bytes (the policy refuses those first).
        """
        ...

    async def verify(self, password: str, password_hash: str | None) -> bool:
        """Constant-time check of ``password`` against ``password_hash``.

        With ``password_hash`` None it spends one check against a dummy hash of the same cost and
        returns False, so an unknown email costs the same time as a wrong password. Never raises:
        a malformed hash or a password the algorithm cannot take gives False.
        """
        ...


class Totp(Protocol):
    """Time-based one-time passwords (RFC 6238; contract section 10): SHA-1, 6 digits, 30 s
    steps. Pure computation, no I/O."""

    def new_secret(self) -> str:
        """A new random secret, base32 (RFC 4648) without padding: 32 characters, 160 bits."""
        ...

    def provisioning_uri(self, secret: str, account: str, issuer: str) -> str:
        """The ``otpauth://totp/ISSUER:ACCOUNT?secret=...&issuer=...`` URI authenticator apps
        read (the Key Uri Format), with SHA-1, 6 digits and a 30 s period."""
        ...

    def qr_svg(self, uri: str) -> str:
        """``uri`` as a QR code, an SVG document (UTF-8 text)."""
        ...

    def matching_step(self, secret: str, code: str, at: datetime, window: int = 1) -> int | None:
        """The time step (Unix time // 30) within ``window`` steps of ``at`` whose code equals
        ``code`` (compared in constant time), or None. ``code`` not 6 digits → None."""
        ...


class SecretSealer(Protocol):
    """Authenticated encryption of secrets at rest (AES-256-GCM): the TOTP secrets
    (contract section 10). ``context`` (e.g. the user id) is bound as associated data, so a
    sealed value moved to another row does not open."""

    def seal(self, plaintext: bytes, context: bytes) -> bytes:
        """``nonce || ciphertext || tag`` of ``plaintext`` (12 + len + 16 bytes)."""
        ...

    def unseal(self, sealed: bytes, context: bytes) -> bytes:
        """The plaintext of ``seal(plaintext, context)``. Raises ``SealedSecretError`` if the
        value was not sealed with this key and context, or was altered."""
        ...

    def mac(self, data: bytes) -> bytes:
        """A MAC of ``data`` (32 bytes) under a key derived from the sealing key, the same on
        every instance sharing it: for values the server issues and later checks statelessly
        (DPoP nonces, contract section 14)."""
        ...


class SealedSecretError(Exception):
    """A sealed secret cannot be opened: another key (``auth.key_dir`` or the key-encryption key
    changed), another context, or altered bytes. An operator problem, not a client's."""


class Signer(Protocol):
    """Signs and verifies JWT access tokens (RFC 7519, RFC 7515; RS256 or ML-DSA per RFC 9964)."""

    @property
    def algorithm(self) -> str:
        """The JWS ``alg`` new tokens are signed with (``RS256``, ``ML-DSA-65``, ``ML-DSA-87``)."""
        ...

    async def sign(self, claims: Mapping[str, Any], *, typ: str = "JWT") -> str:
        """A compact JWS over ``claims`` with header ``{alg, typ, kid}`` (``typ``: ``JWT`` for
        user tokens, ``at+jwt`` for client tokens, RFC 9068)."""
        ...

    async def verify(
        self, token: str, *, issuer: str, audience: str | None, leeway: int, typ: str = "JWT"
    ) -> dict[str, Any]:
        """The claims of a valid token; raises ``InvalidToken`` otherwise.

        Rejects ``alg: none``, any algorithm not of a key in the verification set, a missing or
        unknown ``kid``, a header ``typ`` other than ``typ``, a bad signature, expiry (with
        ``leeway`` seconds), a wrong ``iss``, an ``aud`` without ``audience`` (None: any), and
        tokens lacking any of ``sub, iat, exp, iss, aud, jti``.
        """
        ...

    def jwks(self) -> dict[str, Any]:
        """The JWK Set (RFC 7517) of every public key that may still verify a live token."""
        ...


EmailNormalizer = Callable[[str], str]
"""Checks an email's syntax and returns its canonical lower-case form; raises ``ValidationFailed``
naming the field ``email`` when the syntax is bad (contract section 2)."""


class EventBus(Protocol):
    """Publish/subscribe of application events. Subscribers' failures are logged, not raised.

    A bus for many instances (NATS, Redis) also sends each ``SharedEvent`` published here to the
    other instances, which deliver it to their subscribers with ``origin`` set (contract
    section 12; ADR 0015)."""

    async def publish(self, event: Event) -> None:
        """Deliver ``event`` to every subscriber of its type (and of its base types).

        Never raises because of a subscriber.
        """
        ...

    def subscribe(
        self, event_type: type[E], handler: Callable[[E], Awaitable[None] | None]
    ) -> None:
        """Call ``handler`` (sync or async) for every published instance of ``event_type``."""
        ...


@attrs.frozen
class EmailMessage:
    """One message to send (contract section 9): ``to`` one address, a one-line ``subject``,
    a plain-text ``text`` body and an ``html`` alternative. ``kind`` (``verify`` | ``reset``)
    labels metrics and logs; ``link`` is the message's link, which holds a single-use token:
    adapters that log must not log it (the ``console`` backend excepted, for development)."""

    kind: str
    to: str
    subject: str
    text: str = attrs.field(repr=False)
    html: str = attrs.field(repr=False)
    link: str = attrs.field(repr=False)


class EmailNotSent(Exception):
    """The message could not be handed to the mail server (refused, unreachable, timed out).
    ``reason`` names the failure's kind without any part of the message."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class EmailSender(Protocol):
    """Hands messages to a mail transport (``email.backend``: console, smtp, none)."""

    async def send(self, message: EmailMessage) -> None:
        """Send ``message`` from the configured sender address. Raises ``EmailNotSent``."""
        ...


class Clock(Protocol):
    """The source of time."""

    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...


class LoginAttempts(Protocol):
    """Failed-login records for throttling, keyed by an opaque string (the throttle passes a
    SHA-256 hex digest of email and client address). Each call stands alone, outside any unit of
    work."""

    async def failures_since(self, key: str, since: datetime) -> list[datetime]:
        """Times of the failures recorded for ``key`` at or after ``since``, oldest first."""
        ...

    async def record_failure(self, key: str, at: datetime) -> None:
        """Record one failure for ``key`` at ``at``; failures older than the adapter's
        ``max_age`` may be forgotten. Raises ``ValueError`` if ``at`` is naive."""
        ...

    async def reset(self, key: str) -> None:
        """Forget every failure of ``key`` (after a successful login)."""
        ...


__all__ = [
    "Clock",
    "EmailMessage",
    "EmailNormalizer",
    "EmailNotSent",
    "EmailSender",
    "EmailTokenStore",
    "EventBus",
    "GroupRepo",
    "Hasher",
    "LoginAttempts",
    "SessionStore",
    "Signer",
    "Storage",
    "TokenStore",
    "UnitOfWork",
    "UserRepo",
]
