"""Login responses (assertions) checked by the py_webauthn adapter (WebAuthn L3 §7.2;
docs/reference/mfa-and-passkeys.md), driven by the software authenticator: a good assertion for
Ed25519, ES256 and RS256 gives the new counter and the user handle; each broken rule is refused; a
counter that does not grow (when either counter is non-zero) is refused with reason ``counter``."""

from __future__ import annotations

import os
from typing import Any

import pytest

from adapters.webauthn.py_webauthn import PyWebAuthn
from application.ports import NewCredential, RelyingParty
from domain.errors import InvalidPasskey
from tests.webauthn_authenticator import BE, BS, UP, SoftAuthenticator, b64url, b64url_decode

RP = RelyingParty("example.com", "authsvc", ("https://app.example.com",), "required")
ORIGIN = "https://app.example.com"
WEBAUTHN = PyWebAuthn()


def registered(device: SoftAuthenticator) -> NewCredential:
    challenge = os.urandom(32)
    options = WEBAUTHN.registration_options(RP, b"h" * 32, "alice@example.com", challenge, ())
    return WEBAUTHN.verify_registration(RP, device.register(options, ORIGIN), challenge)


def request(allow: tuple[bytes, ...] = ()) -> tuple[dict[str, Any], bytes]:
    challenge = os.urandom(32)
    return WEBAUTHN.authentication_options(RP, challenge, allow), challenge


def test_the_request_options() -> None:
    options, challenge = request((b"cred-1",))
    assert b64url_decode(options["challenge"]) == challenge and options["rpId"] == "example.com"
    assert options["allowCredentials"][0]["id"] == b64url(b"cred-1")
    assert options["userVerification"] == "required"
    assert request()[0].get("allowCredentials", []) == []  # discoverable login


@pytest.mark.parametrize("alg", ["EdDSA", "ES256", "RS256"])
def test_a_good_assertion(alg: str) -> None:
    device = SoftAuthenticator(alg)
    new = registered(device)
    options, challenge = request((new.credential_id,))
    answer = device.assert_(options, ORIGIN, user_handle=b"h" * 32)
    seen = WEBAUTHN.verify_authentication(RP, answer, challenge, new.public_key, new.sign_count)
    assert (seen.credential_id, seen.sign_count) == (device.credential_id, 1)
    assert seen.user_handle == b"h" * 32 and seen.user_verified and seen.backed_up


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("another origin", {"origin": "https://evil.example.com"}),
        ("another RP ID", {"rp_id": "evil.example.com"}),
        ("another ceremony's challenge", {"challenge": b64url(os.urandom(32))}),
        ("a registration's type", {"type_": "webauthn.create"}),
        ("no user presence", {"flags": BE | BS}),
        ("no user verification", {"flags": UP | BE | BS}),
        ("a signature over other data by another key", {"signer": SoftAuthenticator("ES256")}),
    ],
)
def test_each_broken_rule_is_refused(name: str, kwargs: dict[str, Any]) -> None:
    device = SoftAuthenticator("ES256")
    new = registered(device)
    options, challenge = request()
    answer = device.assert_(options, kwargs.pop("origin", ORIGIN), **kwargs)
    with pytest.raises(InvalidPasskey) as refused:
        WEBAUTHN.verify_authentication(RP, answer, challenge, new.public_key, 0)
    assert refused.value.reason != "counter", name


@pytest.mark.parametrize(("stored", "presented"), [(5, 5), (5, 4), (5, 0), (0, 0)])
def test_the_counter_must_grow_when_either_is_non_zero(stored: int, presented: int) -> None:
    device = SoftAuthenticator("ES256")
    new = registered(device)
    options, challenge = request()
    answer = device.assert_(options, ORIGIN, count=presented)
    if stored == presented == 0:  # an authenticator without a counter: accepted
        seen = WEBAUTHN.verify_authentication(RP, answer, challenge, new.public_key, stored)
        assert seen.sign_count == 0
        return
    with pytest.raises(InvalidPasskey) as refused:
        WEBAUTHN.verify_authentication(RP, answer, challenge, new.public_key, stored)
    assert refused.value.reason == "counter"


@pytest.mark.parametrize("presented", [0, 1, 5])
def test_a_bad_signature_is_refused_as_such_whatever_its_counter(presented: int) -> None:
    """WebAuthn L3 §7.2: the signature before the counter, so a forged assertion with a low
    counter is never a counter regression (it could not flag the passkey)."""
    device = SoftAuthenticator("ES256")
    new = registered(device)
    options, challenge = request()
    forged = device.assert_(options, ORIGIN, count=presented, signer=SoftAuthenticator("ES256"))
    with pytest.raises(InvalidPasskey) as refused:
        WEBAUTHN.verify_authentication(RP, forged, challenge, new.public_key, 5)
    assert refused.value.reason == "signature"
