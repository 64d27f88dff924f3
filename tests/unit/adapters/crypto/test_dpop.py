"""The DPoP proof checks (RFC 9449 §4.3 and §7.1) of ``adapters.crypto.dpop``: a good proof
gives the key's RFC 7638 thumbprint; each broken rule is refused naming it — wrong ``typ``,
``alg`` none or HMAC, a key with private members, a signature by another key, wrong ``htm`` or
``htu``, ``iat`` out of the window, no ``jti``, and for a resource request a missing or wrong
``ath`` and a key other than the token's ``cnf.jkt``."""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import UTC, datetime
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

from adapters.crypto.dpop import JwtDpopVerifier, normalized_url
from domain.errors import InvalidDpopProof

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
URL = "https://auth.example.com/oauth/token"
KEY = ec.generate_private_key(ec.SECP256R1())
OTHER = ec.generate_private_key(ec.SECP256R1())
TOKEN = "eyJhbGciOiJSUzI1NiJ9.e30.c2ln"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwk_of(key: Any) -> dict[str, Any]:
    return json.loads(ECAlgorithm.to_jwk(key.public_key()))  # type: ignore[no-any-return]


def proof(claims: dict[str, Any] | None = None, headers: dict[str, Any] | None = None,
          key: Any = KEY, alg: str = "ES256") -> str:  # fmt: skip
    body = {"htm": "POST", "htu": URL, "iat": int(NOW.timestamp()), "jti": "j-1", **(claims or {})}
    header = {"typ": "dpop+jwt", "jwk": jwk_of(KEY), **(headers or {})}
    return jwt.encode({k: v for k, v in body.items() if v is not None}, key, algorithm=alg,
                      headers=header)  # fmt: skip


def verify(token: str, **kwargs: Any) -> Any:
    return JwtDpopVerifier().verify(token, "POST", (URL,), NOW, 60, **kwargs)


def thumbprint(jwk: dict[str, Any], members: tuple[str, ...]) -> str:
    canonical = json.dumps({m: jwk[m] for m in members}, separators=(",", ":"), sort_keys=True)
    return b64(hashlib.sha256(canonical.encode()).digest())


def test_a_good_proof_gives_its_keys_thumbprint() -> None:
    checked = verify(proof({"nonce": "n-1"}))
    assert checked.jkt == thumbprint(jwk_of(KEY), ("crv", "kty", "x", "y"))
    assert (checked.jti, checked.nonce) == ("j-1", "n-1")
    # The query and fragment of htu do not count; scheme and host are case-insensitive.
    assert verify(proof({"htu": "HTTPS://Auth.Example.com/oauth/token?x=1#f"})).jti == "j-1"


def test_rsa_and_ed25519_keys_are_accepted() -> None:
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    rsa_jwk = json.loads(RSAAlgorithm.to_jwk(rsa_key.public_key()))
    checked = verify(proof(headers={"jwk": rsa_jwk}, key=rsa_key, alg="PS256"))
    assert checked.jkt == thumbprint(rsa_jwk, ("e", "kty", "n"))
    ed = ed25519.Ed25519PrivateKey.generate()
    ed_jwk = json.loads(OKPAlgorithm.to_jwk(ed.public_key()))
    assert verify(proof(headers={"jwk": ed_jwk}, key=ed, alg="EdDSA")).jkt == thumbprint(
        ed_jwk, ("crv", "kty", "x")
    )


def _none_alg() -> str:
    header = {"typ": "dpop+jwt", "alg": "none", "jwk": jwk_of(KEY)}
    body = {"htm": "POST", "htu": URL, "iat": int(NOW.timestamp()), "jti": "j"}
    return f"{b64(json.dumps(header).encode())}.{b64(json.dumps(body).encode())}."


@pytest.mark.parametrize(
    ("name", "make", "reason"),
    [
        ("typ JWT", lambda: proof(headers={"typ": "JWT"}), "typ"),
        ("alg none", _none_alg, "alg"),
        ("alg HS256", lambda: jwt.encode({"htm": "POST"}, "k" * 32, algorithm="HS256",
                                         headers={"typ": "dpop+jwt",
                                                  "jwk": {"kty": "oct", "k": "aw"}}), "alg"),
        ("private members", lambda: proof(headers={"jwk": json.loads(ECAlgorithm.to_jwk(KEY))}),
         "jwk"),
        ("no jwk", lambda: proof(headers={"jwk": None}), "jwk"),
        ("another key's signature", lambda: proof(key=OTHER), "signature"),
        ("htm", lambda: proof({"htm": "GET"}), "htm"),
        ("htu", lambda: proof({"htu": "https://evil.example.com/oauth/token"}), "htu"),
        ("iat old", lambda: proof({"iat": int(NOW.timestamp()) - 61}), "iat"),
        ("iat future", lambda: proof({"iat": int(NOW.timestamp()) + 61}), "iat"),
        ("no jti", lambda: proof({"jti": None}), "jti"),
        ("no htu", lambda: proof({"htu": None}), "htu"),
        ("not a JWS", lambda: "a.b", "malformed"),
    ],
)  # fmt: skip
def test_each_broken_rule_is_refused(name: str, make: Any, reason: str) -> None:
    with pytest.raises(InvalidDpopProof) as refused:
        verify(make())
    assert refused.value.reason == reason, name


def test_a_resource_request_needs_ath_and_the_bound_key() -> None:
    ath = b64(hashlib.sha256(TOKEN.encode()).digest())
    jkt = thumbprint(jwk_of(KEY), ("crv", "kty", "x", "y"))
    assert verify(proof({"ath": ath}), access_token=TOKEN, jkt=jkt).jkt == jkt
    for claims, reason in (({}, "ath"), ({"ath": b64(b"other")}, "ath")):
        with pytest.raises(InvalidDpopProof) as refused:
            verify(proof(claims), access_token=TOKEN, jkt=jkt)
        assert refused.value.reason == reason
    other_jkt = thumbprint(jwk_of(OTHER), ("crv", "kty", "x", "y"))
    with pytest.raises(InvalidDpopProof) as refused:
        verify(proof({"ath": ath}), access_token=TOKEN, jkt=other_jkt)
    assert refused.value.reason == "jkt"


@pytest.mark.parametrize(
    ("htu", "endpoint"),
    [
        ("HTTP://LOCALHOST:80/oauth/token", "http://localhost/oauth/token"),  # case, port
        ("https://Auth.Example.COM:443/oauth/token", "https://auth.example.com/oauth/token"),
        ("http://localhost:8080/oauth/token", "HTTP://localhost:8080/oauth/token"),
        ("http://localhost/%6Fauth/token", "http://localhost/oauth/token"),  # unreserved decoded
        ("http://localhost/a%2fb", "http://localhost/a%2Fb"),  # hex digits upper-cased
        ("http://localhost/%7Eme", "http://localhost/~me"),
        ("http://localhost", "http://localhost/"),  # empty path is "/" (RFC 3986 §6.2.3)
        ("http://localhost/oauth/token?a=1#frag", "http://localhost/oauth/token"),
        ("http://[::1]:80/oauth/token", "http://[::1]/oauth/token"),
    ],
)
def test_equivalent_urls_normalise_alike(htu: str, endpoint: str) -> None:
    """RFC 3986 §6.2.2 (case, percent-encoding) and §6.2.3 (default port, empty path)."""
    assert normalized_url(htu) is not None
    assert normalized_url(htu) == normalized_url(endpoint)


@pytest.mark.parametrize(
    ("htu", "endpoint"),
    [
        ("https://localhost/oauth/token", "http://localhost/oauth/token"),  # scheme
        ("http://localhost:8080/oauth/token", "http://localhost/oauth/token"),  # port
        ("http://localhost/OAUTH/token", "http://localhost/oauth/token"),  # path is case-exact
        ("http://localhost/oauth/token/", "http://localhost/oauth/token"),
        ("http://localhost/oauth%2Ftoken", "http://localhost/oauth/token"),  # reserved stays
        ("http://user@localhost/oauth/token", "http://localhost/oauth/token"),
        ("http://localhost.evil.example/oauth/token", "http://localhost/oauth/token"),
    ],
)
def test_different_urls_stay_different(htu: str, endpoint: str) -> None:
    assert normalized_url(htu) != normalized_url(endpoint)


@pytest.mark.parametrize(
    "htu", ["/oauth/token", "oauth/token", "http://", "http://a:99999/x", "mailto:a@b", ""]
)
def test_what_is_no_absolute_http_url_normalises_to_none(htu: str) -> None:
    assert normalized_url(htu) is None


def test_htu_is_compared_after_normalisation() -> None:
    endpoint = "http://localhost/oauth/token"
    checked = JwtDpopVerifier().verify(
        proof({"htu": "HTTP://LOCALHOST:80/%6Fauth/token"}), "POST", (endpoint,), NOW, 60
    )
    assert checked.jti == "j-1"
    for htu in ("/oauth/token", "http://a:99999/oauth/token", "https://localhost/oauth/token"):
        with pytest.raises(InvalidDpopProof) as refused:
            JwtDpopVerifier().verify(proof({"htu": htu}), "POST", (endpoint,), NOW, 60)
        assert refused.value.reason == "htu"
