"""Signing keys in the database (``auth.key_store = "database"``; docs/reference/operations.md, ADR
0015).

Every instance over one database signs with the same key and verifies with the same set: the
keys live in the table ``signing_keys`` (migration ``0003_signing_keys``) of the storage's
PostgreSQL database (or SQLite file). The public JWK (RFC 7517) is stored in clear; the private
material (PKCS#8 PEM for RS256, the 32-byte FIPS 204 seed for ML-DSA) only as AES-256-GCM
ciphertext under the key-encryption key ``auth.key_encryption_key`` (NIST SP 800-38D: a random
96-bit nonce per key, stored before the ciphertext and its 128-bit tag; the associated data
binds the ciphertext to its ``kid`` and ``alg``, so a row's ciphertext moved to another row does
not decrypt). ``kek_id`` records which key-encryption key was used (a fingerprint: the first 8
bytes of SHA-256 over a label and the key, hex), so a wrong key is reported as such. Hydra
(JWKs in the database, encrypted under a system secret) and Keycloak are the models.

Changes run in one transaction under an exclusive lock — ``pg_advisory_xact_lock`` on
PostgreSQL, ``BEGIN IMMEDIATE`` on SQLite — taken before the records are read, so of many
instances starting at once exactly one creates the first key and the others read it (the
primary key on ``kid`` stands behind it). Each call opens its own short connection (psycopg or
sqlite3; synchronous: call from a worker thread), independent of the storage adapters' pools.
"""

# Only constant table and column names are interpolated into SQL; values are always bound.
# ruff: noqa: S608

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import logging
import os
import secrets
import sqlite3
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import attrs
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from adapters.crypto.key_files import KEY_FILES, generate_material
from adapters.crypto.key_records import (
    KeyPlan,
    KeyRecord,
    KeyStoreError,
    NewKey,
    SigningKeyStore,
    merge,
)
from adapters.persistence.errors import redact_dsn, safe_reason
from adapters.persistence.postgres.unit import POSTGRES
from adapters.persistence.sql.dialect import Dialect
from adapters.persistence.sqlite.unit import SQLITE

log = logging.getLogger(__name__)

KEK_BYTES = 32
"""A key-encryption key is 32 bytes (AES-256), written as base64url (43 characters)."""
NONCE_BYTES = 12
"""The AES-GCM nonce stored before each ciphertext (96 bits, random)."""
KEK_SETTING = "auth.key_encryption_key"
KEK_FILE_SETTING = "auth.key_encryption_key_file"

_PG_LOCK_KEY = 0x617574687376636B  # "authsvck": the advisory lock of signing-key changes
_COLUMNS = "kid, alg, created_at, activates_at, retired_at, verify_until"
_AAD_LABEL = b"authsvc signing key\x00"
_KEK_ID_LABEL = b"authsvc key-encryption key id\x00"


# --------------------------------------------------------------------------- the KEK


def parse_key_encryption_key(text: str) -> bytes:
    """The 32 bytes of a key-encryption key written as base64url (padding optional; spaces
    and line breaks around it ignored). Raises ``ValueError`` saying what is wrong, never
    echoing the value."""
    value = text.strip()
    if not value:
        raise ValueError("is empty")
    if value.strip("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_="):
        raise ValueError("must be base64url (A-Z a-z 0-9 - _)")
    try:
        key = base64.urlsafe_b64decode(value.rstrip("=") + "=" * (-len(value.rstrip("=")) % 4))
    except (binascii.Error, ValueError):
        raise ValueError("is not valid base64url") from None
    if len(key) != KEK_BYTES:
        raise ValueError(f"must decode to {KEK_BYTES} bytes, not {len(key)}")
    return key


def read_key_encryption_key(value: str, path: str) -> bytes:
    """The key-encryption key given inline (``value``) or in the file ``path`` (``~``
    expanded; its content is the base64url text). Exactly one must be set.

    Raises ``KeyEncryptionKeyError`` naming the setting at fault.
    """
    if value and path:
        raise KeyEncryptionKeyError(
            KEK_SETTING, f"set either {KEK_SETTING} or {KEK_FILE_SETTING}, not both"
        )
    if path:
        try:
            text = Path(path).expanduser().read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or type(exc).__name__
            raise KeyEncryptionKeyError(KEK_FILE_SETTING, f"cannot read {path}: {reason}") from None
        try:
            return parse_key_encryption_key(text)
        except ValueError as exc:
            raise KeyEncryptionKeyError(KEK_FILE_SETTING, f"the key in {path} {exc}") from None
    if not value:
        raise KeyEncryptionKeyError(
            KEK_SETTING,
            "the database key store needs a key-encryption key: set AUTHSVC_AUTH__KEY_"
            f"ENCRYPTION_KEY (32 random bytes, base64url) or {KEK_FILE_SETTING}",
        )
    try:
        return parse_key_encryption_key(value)
    except ValueError as exc:
        raise KeyEncryptionKeyError(KEK_SETTING, str(exc)) from None


class KeyEncryptionKeyError(ValueError):
    """The key-encryption key is missing or unusable; ``key`` names the setting."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
        self.message = message


def kek_id(kek: bytes) -> str:
    """A public fingerprint of a key-encryption key (16 hex characters)."""
    return hashlib.sha256(_KEK_ID_LABEL + kek).hexdigest()[:16]


def _aad(kid: str, alg: str) -> bytes:
    return _AAD_LABEL + kid.encode() + b"\x00" + alg.encode()


def encrypt_material(kek: bytes, kid: str, alg: str, material: bytes) -> bytes:
    """``nonce || AES-256-GCM(kek, nonce, material, aad=kid+alg)``."""
    nonce = secrets.token_bytes(NONCE_BYTES)
    return nonce + AESGCM(kek).encrypt(nonce, material, _aad(kid, alg))


def decrypt_material(kek: bytes, kid: str, alg: str, blob: bytes) -> bytes:
    """The material sealed by ``encrypt_material``. Raises ``KeyStoreError`` when the tag does
    not check (another key-encryption key, or a row altered or moved)."""
    try:
        return AESGCM(kek).decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], _aad(kid, alg))
    except (InvalidTag, ValueError):
        raise KeyStoreError(
            f"signing key {kid} cannot be decrypted with {KEK_SETTING}: the ciphertext does not"
            " authenticate (altered, or moved from another row)"
        ) from None


# --------------------------------------------------------------------------- dialects
# The statements are written with ``$n`` placeholders and rendered by the storage's ``Dialect``
# (ADR 0039), which also converts the times; psycopg runs them as written (``RawCursor``).


def _pg_begin(conn: Any) -> None:
    conn.execute("BEGIN")
    conn.execute("SELECT pg_advisory_xact_lock($1)", (_PG_LOCK_KEY,))


def _sqlite_begin(conn: Any) -> None:
    conn.execute("BEGIN IMMEDIATE")


class DatabaseKeyStore(SigningKeyStore):
    """The ``SigningKeyStore`` in the ``signing_keys`` table; build it with ``postgres(...)`` or
    ``sqlite(...)``. ``kek`` is the 32-byte key-encryption key (``read_key_encryption_key``).

    The table must exist (``Storage.open()`` applies the migrations first). Every method blocks
    on the database; errors reaching it become ``KeyStoreError`` naming the table and the
    (redacted) location.
    """

    def __init__(
        self,
        connect: Callable[[], contextlib.AbstractContextManager[Any]],
        dialect: Dialect,
        begin: Callable[[Any], None],
        errors: tuple[type[BaseException], ...],
        kek: bytes,
        where: str,
    ) -> None:
        if len(kek) != KEK_BYTES:
            raise ValueError(f"a key-encryption key is {KEK_BYTES} bytes")
        self._connect = connect
        self._dialect = dialect
        self._begin = begin
        self._errors = errors
        self._kek = kek
        self._kek_id = kek_id(kek)
        self._where = where

    @classmethod
    def postgres(cls, dsn: str, schema: str | None, kek: bytes) -> DatabaseKeyStore:
        """The store in PostgreSQL at ``dsn`` (tables in ``schema``, else the DSN's default)."""
        import psycopg
        from psycopg import sql

        @contextlib.contextmanager
        def connect() -> Iterator[Any]:
            with psycopg.connect(
                dsn, autocommit=True, connect_timeout=10, cursor_factory=psycopg.RawCursor
            ) as conn:
                if schema:
                    conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
                yield conn

        return cls(connect, POSTGRES, _pg_begin, (psycopg.Error,), kek, redact_dsn(dsn))

    @classmethod
    def sqlite(cls, path: str, kek: bytes) -> DatabaseKeyStore:
        """The store in the SQLite file ``path`` (``~`` expanded)."""
        db = os.path.expanduser(path)

        @contextlib.contextmanager
        def connect() -> Iterator[Any]:
            conn = sqlite3.connect(db, timeout=30, isolation_level=None)
            try:
                yield conn
            finally:
                conn.close()

        return cls(connect, SQLITE, _sqlite_begin, (sqlite3.Error,), kek, db)

    @property
    def location(self) -> str:
        """``table signing_keys of <database>`` (password redacted)."""
        return f"table signing_keys of {self._where}"

    @property
    def key_encryption_key_id(self) -> str:
        """The fingerprint of this store's key-encryption key (public)."""
        return self._kek_id

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        try:
            with self._connect() as conn:
                yield conn
        except self._errors as exc:
            raise KeyStoreError(f"cannot use the {self.location}: {safe_reason(exc)}") from None

    def _sql(self, text: str) -> str:
        return self._dialect.render(text)

    def _to_db(self, at: datetime | None) -> Any:
        return None if at is None else self._dialect.to_db(at)

    def _record(self, row: Any) -> KeyRecord:
        to = self._dialect.from_db
        created, activates = to(row[2]), to(row[3])
        assert created is not None and activates is not None
        return KeyRecord(row[0], row[1], created, activates, to(row[4]), to(row[5]), row[0])

    def _select(self, conn: Any) -> list[KeyRecord]:
        rows = conn.execute(f"SELECT {_COLUMNS} FROM signing_keys ORDER BY kid").fetchall()
        return [self._record(r) for r in rows]

    def records(self) -> list[KeyRecord]:
        """Every key's record (public columns only)."""
        with self._connection() as conn:
            return self._select(conn)

    def material(self, record: KeyRecord) -> bytes:
        """The decrypted private material of ``record``. Raises ``KeyStoreError`` when the row
        is gone, was encrypted under another key-encryption key, or does not authenticate."""
        with self._connection() as conn:
            row = conn.execute(
                self._sql("SELECT private_key, kek_id, alg FROM signing_keys WHERE kid = $1"),
                (record.kid,),
            ).fetchone()
        if row is None:
            raise KeyStoreError(f"signing key {record.kid} is not in the {self.location}")
        blob, their_kek, alg = bytes(row[0]), row[1], row[2]
        if their_kek != self._kek_id:
            raise KeyStoreError(
                f"signing key {record.kid} was encrypted under another {KEK_SETTING} (id"
                f" {their_kek}); this instance's has id {self._kek_id}: give every instance"
                " the same key-encryption key"
            )
        return decrypt_material(self._kek, record.kid, alg, blob)

    def update(self, plan: KeyPlan) -> list[KeyRecord]:
        """Run ``plan`` in one transaction under the exclusive lock; insert its new keys
        (private material encrypted) and update its changed records; commit."""
        with self._connection() as conn:
            self._begin(conn)
            try:
                records = self._select(conn)
                changes = plan(records)
                for key in changes.added:
                    self._insert(conn, key)
                for r in changes.changed:
                    self._save_times(conn, r)
                conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(*self._errors):
                    conn.execute("ROLLBACK")
                raise
        added = tuple(attrs.evolve(k, record=attrs.evolve(k.record, ref=k.record.kid))
                      for k in changes.added)  # fmt: skip
        return merge(records, attrs.evolve(changes, added=added))

    def _insert(self, conn: Any, key: NewKey) -> None:
        r, to = key.record, self._to_db
        sealed = encrypt_material(self._kek, r.kid, r.alg, key.material)
        conn.execute(
            self._sql(
                "INSERT INTO signing_keys (kid, alg, public_jwk, private_key, kek_id, created_at,"
                " activates_at, retired_at, verify_until)"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
            ),
            (
                r.kid,
                r.alg,
                json.dumps(key.jwk, sort_keys=True, separators=(",", ":")),
                sealed,
                self._kek_id,
                to(r.created_at),
                to(r.activates_at),
                to(r.retired_at),
                to(r.verify_until),
            ),
        )
        log.info("stored %s signing key %s in the %s", r.alg, r.kid, self.location)

    def _save_times(self, conn: Any, r: KeyRecord) -> None:
        to = self._to_db
        conn.execute(
            self._sql(
                "UPDATE signing_keys SET activates_at = $1, retired_at = $2, verify_until = $3"
                " WHERE kid = $4"
            ),
            (to(r.activates_at), to(r.retired_at), to(r.verify_until), r.kid),
        )

    def new_material(self, alg: str) -> bytes:
        """Freshly generated material for ``alg`` (RSA-3072 PEM or a 32-byte ML-DSA seed)."""
        if alg not in KEY_FILES:
            raise KeyStoreError(f"unknown algorithm {alg!r}")
        return generate_material(alg)

    def public_jwks(self) -> dict[str, dict[str, Any]]:
        """``{kid: public JWK}`` as stored in clear (for operators and tests)."""
        with self._connection() as conn:
            rows = conn.execute("SELECT kid, public_jwk FROM signing_keys").fetchall()
        return {r[0]: json.loads(r[1]) for r in rows}


__all__ = [
    "KEK_BYTES",
    "DatabaseKeyStore",
    "KeyEncryptionKeyError",
    "decrypt_material",
    "encrypt_material",
    "kek_id",
    "parse_key_encryption_key",
    "read_key_encryption_key",
]
