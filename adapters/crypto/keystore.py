"""Signing-key files in ``auth.key_dir`` (default ``~/.authsvc/keys``) and the record of their use.

One private key file per algorithm (docs/reference/tokens-and-sessions.md, "Access token"):

============  ========================  ==================================================
algorithm     file                      content
============  ========================  ==================================================
RS256         ``rs256.pem``             RSA 3072-bit private key, PKCS#8 PEM, unencrypted
ML-DSA-65     ``ml-dsa-65.seed``        the 32-byte FIPS 204 key-generation seed (binary)
ML-DSA-87     ``ml-dsa-87.seed``        the 32-byte FIPS 204 key-generation seed (binary)
============  ========================  ==================================================

The directory is mode 0700 and every private key file 0600. A missing key is created
atomically: the material is written to a temporary file opened with ``O_CREAT | O_EXCL`` and
mode 0600 in the same directory, flushed to disk, then ``os.link``-ed to its final name. The
link fails if the name exists, so of two processes starting at once exactly one key wins; the
loser discards its own material and re-reads the winner's file. A reader therefore never sees a
half-written key.

``keys.json`` beside the keys holds one ``KeyRecord`` per key (``adapters.crypto.key_records``:
kid, algorithm, file, when it signs and until when it verifies; no secret), under
``"records"`` (format 2; the format-1 ``"keys"`` map of ADR 0005, one entry per algorithm, is
read and converted). It is updated under an advisory ``flock`` so that several workers sharing
the directory merge their views instead of overwriting each other. The first key of an
algorithm is the file above; a rotated key (``authsvc keys rotate``) gets a file of its own,
``<name>.<kid>.<ext>`` (``rs256.<kid>.pem``), created the same atomic way. This is the
``SigningKeyStore`` of ``auth.key_store = "file"`` (ADR 0015).

Blocking work (RSA key generation takes about 0.2-1 s) should run off the event loop: use the
``*_async`` methods from async code.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs

from adapters.crypto.key_files import (
    KEY_FILES,
    check_material,
    create_exclusive,
    generate_material,
    read_private_file,
)
from adapters.crypto.key_records import (
    KeyChanges,
    KeyPlan,
    KeyRecord,
    KeyStoreError,
    SigningKeyStore,
    merge,
)
from adapters.crypto.keys_json import STATE_FILE, record_json, records_of

log = logging.getLogger(__name__)

LOCK_FILE = ".keys.lock"


class KeyStore(SigningKeyStore):
    """Private signing keys stored as files under one directory (``~`` is expanded).

    ``load_or_create(alg)`` returns the key material (bytes: PEM for RS256, the 32-byte seed
    for ML-DSA), generating and storing it first if absent. ``read_state``/``update_state``
    manage ``keys.json``; ``records``/``material``/``update`` are the ``SigningKeyStore``.
    Every method is synchronous and may block (disk, key generation); the ``*_async`` variants
    run them in a worker thread.
    """

    def __init__(self, key_dir: str | os.PathLike[str]) -> None:
        self.path = Path(os.path.expanduser(os.fspath(key_dir)))

    # -- directory ---------------------------------------------------------------------------

    def ensure_dir(self) -> Path:
        """Create the key directory (and parents) if needed and make sure it is mode 0700.

        Raises ``KeyStoreError`` if the path exists and is not a directory.
        """
        try:
            self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
        except FileExistsError as e:
            raise KeyStoreError(f"key directory {self.path} exists and is not a directory") from e
        st = self.path.stat()
        if not stat.S_ISDIR(st.st_mode):
            raise KeyStoreError(f"key directory {self.path} is not a directory")
        if stat.S_IMODE(st.st_mode) != 0o700:
            os.chmod(self.path, 0o700)
        return self.path

    def key_path(self, alg: str) -> Path:
        """The path of ``alg``'s private key file. Raises ``KeyError`` for an unknown alg."""
        return self.path / KEY_FILES[alg]

    # -- keys --------------------------------------------------------------------------------

    def load(self, alg: str) -> bytes | None:
        """The stored key material of ``alg``, or None if there is no key file.

        Tightens a key file readable by group or others to 0600 (with a warning). Raises
        ``KeyStoreError`` if the file is not a regular file or its content is malformed.
        """
        return self._read_key_file(self.key_path(alg), alg)

    def _read_key_file(self, path: Path, alg: str) -> bytes | None:
        data = read_private_file(path, "signing key")
        if data is not None:
            check_material(alg, data, path)
        return data

    def load_or_create(self, alg: str) -> bytes:
        """The key material of ``alg``, generated and stored atomically first if missing.

        Safe against concurrent creators (threads or processes): all of them return the same
        material. Raises ``KeyStoreError`` on an unusable directory or a corrupt key file.
        """
        self.ensure_dir()
        existing = self.load(alg)
        if existing is not None:
            return existing
        material = generate_material(alg)
        if create_exclusive(self.key_path(alg), material):
            log.info("generated a new %s signing key in %s", alg, self.path)
            return material
        winner = self.load(alg)
        if winner is None:  # pragma: no cover - the file was deleted between link and read
            raise KeyStoreError(f"signing key {self.key_path(alg)} vanished while being created")
        return winner

    def load_or_create_secret(self, name: str, size: int) -> bytes:
        """The ``size`` random bytes in the file ``name`` of the key directory, created first
        (mode 0600, atomically, safe against concurrent creators) if missing. For symmetric
        keys such as the MFA sealing key (``mfa.key``).

        Raises ``KeyStoreError`` on an unusable directory, a file that is not regular, or one
        that does not hold exactly ``size`` bytes.
        """
        self.ensure_dir()
        path = self.path / name
        existing = self._read_secret_file(path, size)
        if existing is not None:
            return existing
        if create_exclusive(path, secrets.token_bytes(size)):
            log.info("generated a new key file %s", path)
        winner = self._read_secret_file(path, size)
        if winner is None:  # pragma: no cover - the file was deleted between link and read
            raise KeyStoreError(f"secret key {path} vanished while being created")
        return winner

    def _read_secret_file(self, path: Path, size: int) -> bytes | None:
        data = read_private_file(path, "secret key")
        if data is not None and len(data) != size:
            raise KeyStoreError(f"secret key {path} is {len(data)} bytes, not {size}")
        return data

    async def load_or_create_async(self, alg: str) -> bytes:
        """``load_or_create`` in a worker thread (key generation blocks for up to ~1 s)."""
        return await asyncio.to_thread(self.load_or_create, alg)

    # -- state (keys.json) -------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.ensure_dir()
        fd = os.open(self.path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def read_state(self) -> dict[str, Any]:
        """The parsed ``keys.json`` (``{"keys": {alg: {...}}, "records": [...]}``); ``{"keys":
        {}}`` if absent or unreadable."""
        try:
            raw = (self.path / STATE_FILE).read_bytes()
        except FileNotFoundError:
            return {"keys": {}}
        except OSError as e:
            raise KeyStoreError(f"cannot read {self.path / STATE_FILE}: {e.strerror}") from e
        try:
            state = json.loads(raw)
        except ValueError:
            log.warning("ignoring malformed %s in %s", STATE_FILE, self.path)
            return {"keys": {}}
        if not isinstance(state, dict):
            return {"keys": {}}
        if not isinstance(state.get("keys"), dict):
            state["keys"] = {}
        return state

    def update_state(self, mutate: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        """Read ``keys.json`` under an exclusive lock, call ``mutate(state)`` (it edits the dict
        in place), write the result atomically (temp file + rename) and return it."""
        with self._locked():
            state = self.read_state()
            mutate(state)
            target = self.path / STATE_FILE
            tmp = target.with_name(f".{STATE_FILE}.{os.getpid()}.{secrets.token_hex(8)}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(state, f, indent=2, sort_keys=True)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, target)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
            return state

    # -- the SigningKeyStore ------------------------------------------------------------------

    @property
    def location(self) -> str:
        """``key directory <path>``."""
        return f"key directory {self.path}"

    def records(self) -> list[KeyRecord]:
        """Every key's record from ``keys.json`` (format 1 converted). Raises ``KeyStoreError``
        if the directory cannot be read."""
        return records_of(self.read_state())

    def material(self, record: KeyRecord) -> bytes:
        """The private material of ``record``'s file. Raises ``KeyStoreError`` if it is missing,
        not a regular file or malformed."""
        alg = record.alg
        if alg not in KEY_FILES:
            raise KeyStoreError(f"unknown algorithm {alg!r} of key {record.kid}")
        path = self._record_path(record)
        data = self._read_key_file(path, alg)
        if data is None:
            raise KeyStoreError(f"the file {path} of key {record.kid} is missing")
        return data

    def update(self, plan: KeyPlan) -> list[KeyRecord]:
        """Run ``plan`` under the directory's ``flock``; new keys' files are created atomically
        (0600), then ``keys.json`` is replaced. Returns every record afterwards."""
        result: list[KeyRecord] = []

        def mutate(state: dict[str, Any]) -> None:
            records = records_of(state)
            changes = plan(records)
            if not changes:
                result.extend(records)
                return
            added = tuple(attrs.evolve(k, record=self._store_new(k.record, k.material))
                          for k in changes.added)  # fmt: skip
            merged = merge(records, KeyChanges(added, changes.changed))
            state.pop("keys", None)
            state["version"] = 2
            state["records"] = [record_json(r) for r in merged]
            result.extend(merged)

        self.update_state(mutate)
        return result

    def _record_path(self, record: KeyRecord) -> Path:
        name = record.ref or KEY_FILES[record.alg]
        if "/" in name or name.startswith("."):
            raise KeyStoreError(f"key {record.kid} names a file outside {self.path}: {name!r}")
        return self.path / name

    def _store_new(self, record: KeyRecord, material: bytes) -> KeyRecord:
        """Write a new key's file (the algorithm's first file if it is free or already holds
        this very material — a seed placed there by hand — else ``<name>.<kid>.<ext>``)."""
        legacy = self.key_path(record.alg)
        existing = self.load(record.alg)
        if existing is None and create_exclusive(legacy, material):
            return attrs.evolve(record, ref=legacy.name)
        if existing == material:
            return attrs.evolve(record, ref=legacy.name)
        stem, _, ext = legacy.name.partition(".")
        path = self.path / f"{stem}.{record.kid}.{ext}"
        created = create_exclusive(path, material)
        if not created and self._read_key_file(path, record.alg) != material:
            raise KeyStoreError(f"{path} exists with another key")
        log.info("stored a new %s signing key %s in %s", record.alg, record.kid, self.path)
        return attrs.evolve(record, ref=path.name)

    def new_material(self, alg: str) -> bytes:
        """Material for the first key of ``alg``: the algorithm's file if one is there already
        without a record (placed by hand, or from before ``keys.json``), else new material."""
        taken = {r.ref or KEY_FILES[r.alg] for r in self.records()}
        if KEY_FILES[alg] not in taken:
            existing = self.load(alg)
            if existing is not None:
                return existing
        return generate_material(alg)
