"""Private key files in the key directory: their names (``KEY_FILES``), new material
(``generate_material``), safe reading (``read_private_file``: no symlink, a regular file,
tightened to 0600) and atomic creation (``create_exclusive``). The directory and its
``keys.json`` are ``adapters.crypto.keystore``'s, which keeps symmetric keys (``mfa.key``) in
files of the same kind.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from adapters.crypto.key_records import KeyStoreError

log = logging.getLogger(__name__)

KEY_FILES: Mapping[str, str] = {
    "RS256": "rs256.pem",
    "ML-DSA-65": "ml-dsa-65.seed",
    "ML-DSA-87": "ml-dsa-87.seed",
}
"""The file name of each algorithm's private key inside the key directory."""

RSA_KEY_BITS = 3072
MLDSA_SEED_BYTES = 32

__all__ = [
    "KEY_FILES",
    "MLDSA_SEED_BYTES",
    "RSA_KEY_BITS",
    "check_material",
    "create_exclusive",
    "fsync_dir",
    "generate_material",
    "read_private_file",
]


def generate_material(alg: str) -> bytes:
    """New private key material for ``alg``: RSA-3072 PKCS#8 PEM, or a random 32-byte ML-DSA
    seed (FIPS 204 ``xi``, from ``secrets``). Raises ``KeyError`` for an unknown alg."""
    if alg not in KEY_FILES:
        raise KeyError(alg)
    if alg == "RS256":
        key = rsa.generate_private_key(public_exponent=65537, key_size=RSA_KEY_BITS)
        return key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    return secrets.token_bytes(MLDSA_SEED_BYTES)


def check_material(alg: str, data: bytes, path: Path) -> None:
    """Raise ``KeyStoreError`` unless ``data`` (read from ``path``) looks like ``alg``'s key
    material: a PKCS#8 PEM for RS256, a 32-byte seed for ML-DSA."""
    if alg == "RS256":
        if not data.startswith(b"-----BEGIN PRIVATE KEY-----"):
            raise KeyStoreError(f"signing key {path} is not a PKCS#8 PEM private key")
    elif len(data) != MLDSA_SEED_BYTES:
        raise KeyStoreError(
            f"signing key {path} is {len(data)} bytes; an ML-DSA seed is {MLDSA_SEED_BYTES}"
        )


def create_exclusive(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` (mode 0600) unless it exists; True if this call created it.

    The data goes to a temporary file (``O_CREAT | O_EXCL``, 0600) in the same directory, is
    flushed to disk, then ``os.link``-ed to ``path``: of two concurrent creators exactly one
    wins, and a reader never sees a half-written file.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(8)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(tmp, flags, 0o600)
    try:
        try:
            os.fchmod(fd, 0o600)  # whatever the umask
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        fsync_dir(path.parent)
        return True
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def fsync_dir(path: Path) -> None:
    """Flush the directory ``path`` to disk (a new link in it survives a crash); best effort."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def read_private_file(path: Path, kind: str) -> bytes | None:
    """The bytes of the key file ``path`` (``kind`` names it in errors), or None if it does not
    exist. Never follows a symlink; tightens a file readable by group or others to 0600 (with a
    warning). Raises ``KeyStoreError`` if it cannot be opened or is not a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as e:
        raise KeyStoreError(f"cannot open {kind} {path}: {e.strerror}") from e
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise KeyStoreError(f"{kind} {path} is not a regular file")
        if stat.S_IMODE(st.st_mode) & 0o077:
            log.warning("%s %s was readable by others; setting mode 0600", kind, path)
            os.fchmod(fd, 0o600)
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)
