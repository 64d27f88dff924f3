"""AES-256-GCM sealing of secrets at rest: the TOTP secrets (docs/reference/mfa-and-passkeys.md; ADR
0018).

The key comes from where the signing keys live (``auth.key_store``, ADR 0015):

- ``file``: ``mfa.key`` (32 random bytes) in ``auth.key_dir``, created like the signing keys
  (mode 0600, atomically; concurrent first starts agree on one key);
- ``database``: derived from the key-encryption key by HKDF-SHA-256 with its own label, so every
  instance sharing the database and the KEK opens every secret, and the KEK itself never
  encrypts two kinds of data.
"""

from __future__ import annotations

import hmac
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from adapters.crypto.keystore import KeyStore
from application.ports import SealedSecretError, SecretSealer

KEY_BYTES = 32
NONCE_BYTES = 12
MFA_KEY_FILE = "mfa.key"
"""The sealing key's file in ``auth.key_dir`` (key store ``file``)."""
_HKDF_INFO = b"authsvc mfa secret sealing key v1"
_MAC_INFO = b"authsvc server mac key v1"


class AesGcmSealer(SecretSealer):
    """``SecretSealer`` with one 32-byte AES-256-GCM key: ``seal`` gives
    ``nonce (12 bytes) || ciphertext || tag (16 bytes)``, a fresh random nonce each time."""

    def __init__(self, key: bytes) -> None:
        if len(key) != KEY_BYTES:
            raise ValueError(f"an AES-256-GCM key is {KEY_BYTES} bytes, not {len(key)}")
        self._aead = AESGCM(key)
        hkdf = HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=None, info=_MAC_INFO)
        self._mac_key = hkdf.derive(key)

    @classmethod
    def from_key_dir(cls, key_dir: str) -> AesGcmSealer:
        """The sealer whose key is ``mfa.key`` in ``key_dir`` (created if missing). Raises
        ``KeyStoreError`` for an unusable directory or key file."""
        return cls(KeyStore(key_dir).load_or_create_secret(MFA_KEY_FILE, KEY_BYTES))

    @classmethod
    def from_kek(cls, kek: bytes) -> AesGcmSealer:
        """The sealer whose key is HKDF-SHA-256(``kek``) with this module's label."""
        hkdf = HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=None, info=_HKDF_INFO)
        return cls(hkdf.derive(kek))

    def mac(self, data: bytes) -> bytes:
        """HMAC-SHA-256 of ``data`` (32 bytes) under a key derived from the sealing key by HKDF
        with its own label: the same on every instance that shares the sealing key."""
        return hmac.digest(self._mac_key, data, "sha256")

    def seal(self, plaintext: bytes, context: bytes) -> bytes:
        """Encrypt and authenticate ``plaintext`` with ``context`` as associated data."""
        nonce = os.urandom(NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, plaintext, context)

    def unseal(self, sealed: bytes, context: bytes) -> bytes:
        """Decrypt ``sealed``. Raises ``SealedSecretError`` (another key or context, altered)."""
        try:
            return self._aead.decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], context)
        except (InvalidTag, ValueError):
            raise SealedSecretError(
                "a TOTP secret cannot be decrypted: the MFA key (auth.key_dir/mfa.key, or the"
                " key-encryption key) is not the one it was sealed with"
            ) from None
