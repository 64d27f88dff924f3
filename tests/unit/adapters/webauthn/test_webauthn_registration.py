"""Registration responses checked by the py_webauthn adapter (WebAuthn L3 §7.1;
docs/reference/mfa-and-passkeys.md), driven by the software authenticator: a good response for
Ed25519, ES256 and RS256 gives the credential; each broken rule is refused with
``InvalidPasskey``."""

from __future__ import annotations

import os
from typing import Any

import pytest

from adapters.webauthn.py_webauthn import PyWebAuthn
from application.ports import RelyingParty
from domain.errors import InvalidPasskey
from tests.webauthn_authenticator import BE, BS, UP, UV, SoftAuthenticator, b64url, b64url_decode

RP = RelyingParty("example.com", "authsvc", ("https://app.example.com",), "required")
ORIGIN = "https://app.example.com"
WEBAUTHN = PyWebAuthn()


def _options(
    rp: RelyingParty = RP, exclude: tuple[bytes, ...] = ()
) -> tuple[dict[str, Any], bytes]:
    challenge = os.urandom(32)
    return WEBAUTHN.registration_options(rp, b"h" * 32, "alice@example.com", challenge,
                                         exclude), challenge  # fmt: skip


def test_the_options_are_those_of_the_contract() -> None:
    options, challenge = _options(exclude=(b"old-credential",))
    assert b64url_decode(options["challenge"]) == challenge
    assert options["rp"] == {"id": "example.com", "name": "authsvc"}
    assert b64url_decode(options["user"]["id"]) == b"h" * 32  # the opaque handle
    assert [p["alg"] for p in options["pubKeyCredParams"]] == [-8, -7, -257]
    assert options["attestation"] == "none"
    assert options["authenticatorSelection"]["residentKey"] == "preferred"
    assert options["authenticatorSelection"]["userVerification"] == "required"
    assert options["excludeCredentials"][0]["id"] == b64url(b"old-credential")


@pytest.mark.parametrize("alg", ["EdDSA", "ES256", "RS256"])
def test_a_good_response_gives_the_credential(alg: str) -> None:
    options, challenge = _options()
    device = SoftAuthenticator(alg, sign_count=3)
    new = WEBAUTHN.verify_registration(RP, device.register(options, ORIGIN), challenge)
    assert new.credential_id == device.credential_id
    assert new.sign_count == 3 and new.user_verified
    assert new.aaguid == "01234567-89ab-cdef-0123-456789abcdef"
    assert (new.backup_eligible, new.backed_up) == (True, True)
    assert new.public_key


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("another origin", {"origin": "https://evil.example.com"}),
        ("another RP ID", {"rp_id": "evil.example.com"}),
        ("another ceremony's challenge", {"challenge": b64url(os.urandom(32))}),
        ("an assertion's type", {"type_": "webauthn.get"}),
        ("no user presence", {"flags": UV | BE | BS}),
        ("no user verification", {"flags": UP | BE | BS}),
        ("an algorithm not offered", {"cose_alg": -35}),
    ],
)
def test_each_broken_rule_is_refused(name: str, kwargs: dict[str, Any]) -> None:
    options, challenge = _options()
    origin = kwargs.pop("origin", ORIGIN)
    response = SoftAuthenticator("ES256").register(options, origin, **kwargs)
    with pytest.raises(InvalidPasskey):
        WEBAUTHN.verify_registration(RP, response, challenge)


def test_user_verification_may_be_only_preferred() -> None:
    relaxed = RelyingParty("example.com", "authsvc", (ORIGIN,), "preferred")
    options, challenge = _options(relaxed)
    assert options["authenticatorSelection"]["userVerification"] == "preferred"
    response = SoftAuthenticator("ES256").register(options, ORIGIN, flags=UP)
    new = WEBAUTHN.verify_registration(relaxed, response, challenge)
    assert not new.user_verified and not new.backup_eligible


def test_garbage_is_refused_not_raised() -> None:
    _, challenge = _options()
    for garbage in ({}, {"id": "x", "response": {}}, {"id": 1, "rawId": None, "response": "x"}):
        with pytest.raises(InvalidPasskey):
            WEBAUTHN.verify_registration(RP, garbage, challenge)
