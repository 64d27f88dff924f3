"""A software WebAuthn authenticator for the tests (docs/reference/mfa-and-passkeys.md): it makes
``none``-attested registration responses (and, later, assertions) for Ed25519, ES256 and RS256
keys, built with ``cryptography`` and ``cbor2`` the way an authenticator and a browser would,
and can break any one rule on request (origin, RP ID, challenge, type, flags, algorithm)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import struct
from typing import Any

import attrs
import cbor2
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

UP, UV, BE, BS, AT = 0x01, 0x04, 0x08, 0x10, 0x40
"""Authenticator data flags (WebAuthn L3 §6.1)."""
AAGUID = bytes.fromhex("0123456789abcdef0123456789abcdef")


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _cose_key(private: Any, alg: str) -> dict[int, Any]:
    public = private.public_key()
    if alg == "ES256":
        numbers = public.public_numbers()
        return {1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"),
                -3: numbers.y.to_bytes(32, "big")}  # fmt: skip
    if alg == "EdDSA":
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        return {1: 1, 3: -8, -1: 6, -2: public.public_bytes(Encoding.Raw, PublicFormat.Raw)}
    numbers = public.public_numbers()
    return {1: 3, 3: -257, -1: numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big"),
            -2: numbers.e.to_bytes(3, "big")}  # fmt: skip


def new_key(alg: str) -> Any:
    """A fresh private key for ``alg`` (``ES256``, ``EdDSA``, ``RS256``)."""
    if alg == "ES256":
        return ec.generate_private_key(ec.SECP256R1())
    if alg == "EdDSA":
        return ed25519.Ed25519PrivateKey.generate()
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@attrs.define
class SoftAuthenticator:
    """One credential: its ``alg``, private key, id and signature counter."""

    alg: str = "ES256"
    key: Any = None
    credential_id: bytes = attrs.Factory(lambda: os.urandom(16))
    sign_count: int = 0

    def __attrs_post_init__(self) -> None:
        if self.key is None:
            self.key = new_key(self.alg)

    def register(
        self,
        options: dict[str, Any],
        origin: str,
        *,
        rp_id: str | None = None,
        challenge: str | None = None,
        type_: str = "webauthn.create",
        flags: int = UP | UV | BE | BS,
        cose_alg: int | None = None,
    ) -> dict[str, Any]:
        """A ``RegistrationResponseJSON`` answering creation ``options``; the keyword arguments
        break one rule (another RP ID, challenge, type, flag set or COSE algorithm)."""
        client_data = json.dumps({
            "type": type_, "challenge": challenge or options["challenge"], "origin": origin,
            "crossOrigin": False,
        }).encode()  # fmt: skip
        cose = _cose_key(self.key, self.alg)
        if cose_alg is not None:
            cose[3] = cose_alg
        attested = AAGUID + struct.pack(">H", len(self.credential_id)) + self.credential_id
        auth_data = (
            hashlib.sha256((rp_id or options["rp"]["id"]).encode()).digest()
            + bytes([flags | AT]) + struct.pack(">I", self.sign_count)
            + attested + cbor2.dumps(cose)
        )  # fmt: skip
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        return {
            "id": b64url(self.credential_id), "rawId": b64url(self.credential_id),
            "type": "public-key", "authenticatorAttachment": "platform",
            "response": {"clientDataJSON": b64url(client_data),
                         "attestationObject": b64url(attestation), "transports": ["internal"]},
            "clientExtensionResults": {},
        }  # fmt: skip

    def sign(self, data: bytes) -> bytes:
        """The credential's signature over ``data`` (ES256: DER ECDSA; RS256: PKCS#1 v1.5)."""
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        if self.alg == "ES256":
            return self.key.sign(data, ec.ECDSA(hashes.SHA256()))  # type: ignore[no-any-return]
        if self.alg == "EdDSA":
            return self.key.sign(data)  # type: ignore[no-any-return]
        return self.key.sign(data, padding.PKCS1v15(), hashes.SHA256())  # type: ignore[no-any-return]

    def assert_(
        self,
        options: dict[str, Any],
        origin: str,
        *,
        user_handle: bytes | None = None,
        rp_id: str | None = None,
        challenge: str | None = None,
        type_: str = "webauthn.get",
        flags: int = UP | UV | BE | BS,
        count: int | None = None,
        signer: SoftAuthenticator | None = None,
    ) -> dict[str, Any]:
        """An ``AuthenticationResponseJSON`` answering request ``options``; the counter grows
        by one unless ``count`` says what to send; the keyword arguments break one rule
        (another RP ID, challenge, type, flag set, or a signature by ``signer``'s key)."""
        self.sign_count = self.sign_count + 1 if count is None else count
        client_data = json.dumps({
            "type": type_, "challenge": challenge or options["challenge"], "origin": origin,
            "crossOrigin": False,
        }).encode()  # fmt: skip
        auth_data = (
            hashlib.sha256((rp_id or options["rpId"]).encode()).digest()
            + bytes([flags]) + struct.pack(">I", self.sign_count)
        )  # fmt: skip
        signature = (signer or self).sign(auth_data + hashlib.sha256(client_data).digest())
        response = {
            "clientDataJSON": b64url(client_data),
            "authenticatorData": b64url(auth_data),
            "signature": b64url(signature),
        }
        if user_handle is not None:
            response["userHandle"] = b64url(user_handle)
        return {
            "id": b64url(self.credential_id), "rawId": b64url(self.credential_id),
            "type": "public-key", "authenticatorAttachment": "platform",
            "response": response, "clientExtensionResults": {},
        }  # fmt: skip
