"""The ``WebAuthn`` port on py_webauthn (3.x): options built with its generators and serialized
with its ``options_to_json``; responses checked by its ``verify_registration_response``
(WebAuthn L3 §7.1). No CBOR, COSE key or attestation statement is parsed here."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from typing import Any

from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers.cose import COSEAlgorithmIdentifier
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AttestationConveyancePreference,
    AuthenticatorSelectionCriteria,
    CredentialDeviceType,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from application.ports import NewCredential, RelyingParty, VerifiedAssertion, WebAuthn
from domain.errors import InvalidPasskey
from domain.passkeys import counter_regressed

ALGORITHMS = (
    COSEAlgorithmIdentifier.EDDSA,
    COSEAlgorithmIdentifier.ECDSA_SHA_256,
    COSEAlgorithmIdentifier.RSASSA_PKCS1_v1_5_SHA_256,
)
"""Ed25519 (-8), ES256 (-7), RS256 (-257): what docs/reference/mfa-and-passkeys.md offers, in that
order."""
TIMEOUT_MS = 300_000
"""The browser's timeout hint: the ceremony's 300 s."""


def _reason(exc: Exception) -> str:
    """A short reason for logs and metrics from the library's message (never client data)."""
    text = str(exc).lower()
    if "sign count" in text:
        return "counter"
    for word in ("origin", "challenge", "rp id", "user presence", "user verification",
                 "algorithm", "signature", "type"):  # fmt: skip
        if word in text:
            return word.replace(" ", "_")
    return "invalid"


class PyWebAuthn(WebAuthn):
    """``WebAuthn`` on py_webauthn."""

    def registration_options(
        self,
        rp: RelyingParty,
        user_handle: bytes,
        user_name: str,
        challenge: bytes,
        exclude: Sequence[bytes],
    ) -> dict[str, Any]:
        """See ``WebAuthn.registration_options``."""
        options = generate_registration_options(
            rp_id=rp.rp_id,
            rp_name=rp.rp_name,
            user_id=user_handle,
            user_name=user_name,
            user_display_name=user_name,
            challenge=challenge,
            timeout=TIMEOUT_MS,
            attestation=AttestationConveyancePreference.NONE,
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.PREFERRED,
                user_verification=UserVerificationRequirement(rp.user_verification),
            ),
            exclude_credentials=[PublicKeyCredentialDescriptor(id=c) for c in exclude],
            supported_pub_key_algs=list(ALGORITHMS),
        )
        return json.loads(options_to_json(options))  # type: ignore[no-any-return]

    def verify_registration(
        self, rp: RelyingParty, credential: Mapping[str, Any], challenge: bytes
    ) -> NewCredential:
        """See ``WebAuthn.verify_registration``; raises ``InvalidPasskey``."""
        try:
            verified = verify_registration_response(
                credential=dict(credential),
                expected_challenge=challenge,
                expected_rp_id=rp.rp_id,
                expected_origin=list(rp.origins),
                require_user_presence=True,
                require_user_verification=rp.user_verification == "required",
                supported_pub_key_algs=list(ALGORITHMS),
            )
        except (WebAuthnException, ValueError, TypeError, KeyError) as exc:
            raise InvalidPasskey(_reason(exc)) from None
        return NewCredential(
            credential_id=verified.credential_id,
            public_key=verified.credential_public_key,
            sign_count=verified.sign_count,
            aaguid=verified.aaguid,
            backup_eligible=verified.credential_device_type is CredentialDeviceType.MULTI_DEVICE,
            backed_up=verified.credential_backed_up,
            user_verified=verified.user_verified,
        )

    def authentication_options(
        self, rp: RelyingParty, challenge: bytes, allow: Sequence[bytes]
    ) -> dict[str, Any]:
        """See ``WebAuthn.authentication_options``."""
        options = generate_authentication_options(
            rp_id=rp.rp_id,
            challenge=challenge,
            timeout=TIMEOUT_MS,
            allow_credentials=[PublicKeyCredentialDescriptor(id=c) for c in allow],
            user_verification=UserVerificationRequirement(rp.user_verification),
        )
        return json.loads(options_to_json(options))  # type: ignore[no-any-return]

    def verify_authentication(
        self,
        rp: RelyingParty,
        credential: Mapping[str, Any],
        challenge: bytes,
        public_key: bytes,
        sign_count: int,
    ) -> VerifiedAssertion:
        """See ``WebAuthn.verify_authentication``; raises ``InvalidPasskey``.

        In WebAuthn L3 §7.2's order: py_webauthn checks the counter *before* the signature, so
        it is given a stored counter of 0 (which never fails its check) and the counter is
        compared here, once the signature has verified (``counter_regressed``): an assertion
        with a bad signature is refused as such, whatever its counter."""
        try:
            verified = verify_authentication_response(
                credential=dict(credential),
                expected_challenge=challenge,
                expected_rp_id=rp.rp_id,
                expected_origin=list(rp.origins),
                credential_public_key=public_key,
                credential_current_sign_count=0,  # compared below, after the signature
                require_user_verification=rp.user_verification == "required",
            )
        except (WebAuthnException, ValueError, TypeError, KeyError) as exc:
            raise InvalidPasskey(_reason(exc)) from None
        if counter_regressed(sign_count, verified.new_sign_count):
            raise InvalidPasskey("counter")
        handle = credential.get("response", {}).get("userHandle")
        return VerifiedAssertion(
            credential_id=verified.credential_id,
            sign_count=verified.new_sign_count,
            user_verified=verified.user_verified,
            backed_up=verified.credential_backed_up,
            user_handle=_decoded(handle),
        )


def _decoded(value: Any) -> bytes | None:
    """The bytes of an unpadded base64url string, or None for anything else."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (ValueError, binascii.Error):
        return None
