"""ML-DSA interoperability with an independent FIPS 204 implementation (dilithium-py).

A token our signer makes verifies with dilithium-py given only the JWKS ``pub`` (RFC 9964: pure
ML-DSA, empty context, over the JWS signing input); a signature dilithium-py makes from a seed
verifies with our adapter loaded from the same seed file.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
from pathlib import Path
from typing import Any

import pytest
from dilithium_py.ml_dsa import ML_DSA_65, ML_DSA_87

from adapters.crypto.jwt_signer import JwtSigner
from application.shared.settings import AuthSettings
from domain.errors import InvalidToken
from tests.fakes import FakeClock

IMPLS: dict[str, Any] = {"ML-DSA-65": ML_DSA_65, "ML-DSA-87": ML_DSA_87}
SEED_FILES = {"ML-DSA-65": "ml-dsa-65.seed", "ML-DSA-87": "ml-dsa-87.seed"}


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def claims(settings: AuthSettings, clock: FakeClock) -> dict[str, Any]:
    now = int(clock.now().timestamp())
    return {
        "sub": "user-1",
        "iss": settings.issuer,
        "aud": settings.audience,
        "iat": now,
        "exp": now + 900,
        "jti": secrets.token_hex(6),
    }


@pytest.mark.parametrize("alg", list(IMPLS))
async def test_our_token_verifies_with_dilithium_py_from_jwks(tmp_path: Path, alg: str) -> None:
    settings = AuthSettings(algorithm=alg, key_dir=str(tmp_path))
    clock = FakeClock()
    signer = JwtSigner.from_settings(settings, clock)
    token = await signer.sign(claims(settings, clock))
    (jwk,) = signer.jwks()["keys"]
    pub = b64url_decode(jwk["pub"])
    h, p, s = token.split(".")
    signing_input = f"{h}.{p}".encode()
    assert IMPLS[alg].verify(pub, signing_input, b64url_decode(s))
    assert not IMPLS[alg].verify(pub, signing_input + b"x", b64url_decode(s))


@pytest.mark.parametrize("alg", list(IMPLS))
async def test_dilithium_py_signature_verifies_with_our_adapter(tmp_path: Path, alg: str) -> None:
    seed = secrets.token_bytes(32)
    fd = os.open(tmp_path / SEED_FILES[alg], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, seed)
    os.close(fd)
    os.chmod(tmp_path, 0o700)
    settings = AuthSettings(algorithm=alg, key_dir=str(tmp_path))
    clock = FakeClock()
    signer = JwtSigner.from_settings(settings, clock)

    pk, sk = IMPLS[alg].key_derive(seed)
    (jwk,) = signer.jwks()["keys"]
    assert b64url_decode(jwk["pub"]) == pk  # same FIPS 204 KeyGen_internal(seed)

    header = {"alg": alg, "typ": "JWT", "kid": signer.kid}
    body = claims(settings, clock)
    h = b64url(json.dumps(header).encode())
    p = b64url(json.dumps(body).encode())
    signature = IMPLS[alg].sign(sk, f"{h}.{p}".encode())
    token = f"{h}.{p}.{b64url(signature)}"
    verified = await signer.verify(
        token, issuer=settings.issuer, audience=settings.audience, leeway=0
    )
    assert verified == body

    # A non-empty context changes the signed message (M' = 0 || |ctx| || ctx || M): rejected.
    with_ctx = IMPLS[alg].sign(sk, f"{h}.{p}".encode(), ctx=b"authsvc")
    with pytest.raises(InvalidToken):
        await signer.verify(
            f"{h}.{p}.{b64url(with_ctx)}",
            issuer=settings.issuer,
            audience=settings.audience,
            leeway=0,
        )
