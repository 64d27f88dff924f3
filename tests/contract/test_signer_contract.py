"""Contract of the ``Signer`` port (``adapters.crypto.jwt_signer.JwtSigner``).

Parametrized over RS256, ML-DSA-65 and ML-DSA-87, and for ML-DSA over both backends
(``cryptography`` and ``liboqs``; the liboqs cases skip, with the reason, when liboqs is not
installed). Covers the round trip, the RFC 8725 attacks, the JWKS shape, algorithm switching
without logging anyone out, and a stock PyJWT client verifying RS256 tokens from the JWKS.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import mldsa, padding, rsa
from cryptography.hazmat.primitives.hashes import SHA256

from adapters.crypto.jwt_signer import JwtSigner
from adapters.crypto.mldsa import SignerUnavailable
from adapters.crypto.signing_keys import mldsa_backend
from application.shared.settings import AuthSettings
from domain.errors import InvalidToken
from tests.fakes import FakeClock

CASES = [
    ("RS256", "cryptography"),
    ("ML-DSA-65", "cryptography"),
    ("ML-DSA-65", "liboqs"),
    ("ML-DSA-87", "cryptography"),
    ("ML-DSA-87", "liboqs"),
]
ALGS = ("RS256", "ML-DSA-65", "ML-DSA-87")


def liboqs_skip_reason() -> str | None:
    """Why the liboqs backend cannot run here, or None if it can."""
    try:
        mldsa_backend("liboqs")
    except SignerUnavailable as e:
        return f"liboqs backend unavailable: {e}"
    return None


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def forge(header: dict[str, Any], claims: dict[str, Any], sign: Callable[[bytes], bytes]) -> str:
    """A compact JWS built by hand, signed by ``sign(signing_input)``."""
    h = b64url(json.dumps(header, separators=(",", ":")).encode())
    p = b64url(json.dumps(claims, separators=(",", ":")).encode())
    signing_input = f"{h}.{p}".encode()
    return f"{h}.{p}.{b64url(sign(signing_input))}"


def raw_sign_with(key: Any) -> Callable[[bytes], bytes]:
    """A signing function for a private key of another party (RSA or cryptography ML-DSA)."""
    if isinstance(key, rsa.RSAPrivateKey):
        return lambda m: key.sign(m, padding.PKCS1v15(), SHA256())
    return lambda m: key.sign(m)


@attrs.define
class Env:
    signer: JwtSigner
    settings: AuthSettings
    clock: FakeClock
    key_dir: Path

    def claims(self, **overrides: Any) -> dict[str, Any]:
        now = int(self.clock.now().timestamp())
        claims: dict[str, Any] = {
            "sub": "user-1",
            "email": "ada@example.com",
            "role": "viewer",
            "org_id": "default",
            "iss": self.settings.issuer,
            "aud": self.settings.audience,
            "iat": now,
            "exp": now + self.settings.access_token_ttl,
            "groups": ["g1"],
            "jti": secrets.token_hex(6),
        }
        claims.update(overrides)
        return {k: v for k, v in claims.items() if v is not None}

    async def verify(self, token: str) -> dict[str, Any]:
        return await self.signer.verify(
            token,
            issuer=self.settings.issuer,
            audience=self.settings.audience,
            leeway=self.settings.leeway,
        )


def make_env(tmp_path: Path, alg: str, backend: str, clock: FakeClock | None = None) -> Env:
    settings = AuthSettings(algorithm=alg, mldsa_backend=backend, key_dir=str(tmp_path / "keys"))
    clock = clock or FakeClock()
    return Env(JwtSigner.from_settings(settings, clock), settings, clock, tmp_path / "keys")


@pytest.fixture(params=CASES, ids=[f"{a}-{b}" for a, b in CASES])
def env(request: pytest.FixtureRequest, tmp_path: Path) -> Env:
    alg, backend = request.param
    if backend == "liboqs" and (reason := liboqs_skip_reason()):
        pytest.skip(reason)
    return make_env(tmp_path, alg, backend)


def other_private_key(alg: str) -> Any:
    if alg == "RS256":
        return rsa.generate_private_key(public_exponent=65537, key_size=3072)
    cls = mldsa.MLDSA65PrivateKey if alg == "ML-DSA-65" else mldsa.MLDSA87PrivateKey
    return cls.generate()


# -- round trip and shape ----------------------------------------------------------------------


async def test_round_trip(env: Env) -> None:
    claims = env.claims()
    token = await env.signer.sign(claims)
    assert await env.verify(token) == claims
    header = jwt.get_unverified_header(token)
    assert header == {"alg": env.settings.algorithm, "typ": "JWT", "kid": env.signer.kid}
    assert env.signer.algorithm == env.settings.algorithm


async def test_jwks_shape(env: Env) -> None:
    (jwk,) = env.signer.jwks()["keys"]
    assert jwk["kid"] == env.signer.kid
    if env.settings.algorithm == "RS256":
        assert set(jwk) == {"kty", "n", "e", "kid", "alg", "use"}
        assert (jwk["kty"], jwk["alg"], jwk["use"], jwk["e"]) == ("RSA", "RS256", "sig", "AQAB")
        assert len(b64url_decode(jwk["n"])) * 8 >= 3072
        members = {"e": jwk["e"], "kty": "RSA", "n": jwk["n"]}
    else:
        assert set(jwk) == {"kty", "alg", "pub", "kid", "use"}
        assert (jwk["kty"], jwk["alg"], jwk["use"]) == ("AKP", env.settings.algorithm, "sig")
        size = {"ML-DSA-65": 1952, "ML-DSA-87": 2592}[env.settings.algorithm]
        assert len(b64url_decode(jwk["pub"])) == size
        members = {"alg": jwk["alg"], "kty": "AKP", "pub": jwk["pub"]}
    canonical = json.dumps(members, separators=(",", ":"), sort_keys=True).encode()
    assert jwk["kid"] == b64url(hashlib.sha256(canonical).digest())  # RFC 7638
    assert "d" not in jwk and "priv" not in jwk


async def test_health_reports_active_key(env: Env) -> None:
    health = env.signer.health()
    assert health["alg"] == env.settings.algorithm
    assert health["kid"] == env.signer.kid


async def test_key_reused_across_restarts(env: Env) -> None:
    again = JwtSigner.from_settings(env.settings, env.clock)
    assert again.kid == env.signer.kid
    token = await env.signer.sign(env.claims())
    await again.verify(token, issuer=env.settings.issuer, audience=env.settings.audience, leeway=0)


# -- RFC 8725 attacks ---------------------------------------------------------------------------


async def test_alg_none_rejected(env: Env) -> None:
    header = {"alg": "none", "typ": "JWT", "kid": env.signer.kid}
    token = forge(header, env.claims(), lambda _: b"")
    with pytest.raises(InvalidToken):
        await env.verify(token)
    with pytest.raises(InvalidToken):
        await env.verify(token.rstrip("."))


async def test_hs256_with_public_key_as_secret_rejected(env: Env) -> None:
    jwk = env.signer.jwks()["keys"][0]
    public = env.signer.verification_keys()[0].public
    if env.settings.algorithm == "RS256":
        secret = public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    else:
        secret = b64url_decode(jwk["pub"])
    header = {"alg": "HS256", "typ": "JWT", "kid": env.signer.kid}
    token = forge(header, env.claims(), lambda m: hmac.new(secret, m, hashlib.sha256).digest())
    with pytest.raises(InvalidToken):
        await env.verify(token)


async def test_unknown_kid_rejected(env: Env) -> None:
    token = await env.signer.sign(env.claims())
    h, p, s = token.split(".")
    header = json.loads(b64url_decode(h))
    header["kid"] = "not-a-key"
    with pytest.raises(InvalidToken):
        await env.verify(".".join([b64url(json.dumps(header).encode()), p, s]))


async def test_missing_kid_rejected(env: Env) -> None:
    key = env.signer.verification_keys()[0]
    header = {"alg": env.settings.algorithm, "typ": "JWT"}
    token = forge(header, env.claims(), raw_sign_with_signer_key(key))
    with pytest.raises(InvalidToken, match="kid"):
        await env.verify(token)


def raw_sign_with_signer_key(key: Any) -> Callable[[bytes], bytes]:
    if key.alg == "RS256":
        return raw_sign_with(key.private)
    sign: Callable[[bytes], bytes] = key.private.sign
    return sign


async def test_kid_of_properly_signed_token_must_be_string(env: Env) -> None:
    key = env.signer.verification_keys()[0]
    header = {"alg": env.settings.algorithm, "typ": "JWT", "kid": 7}
    with pytest.raises(InvalidToken):
        await env.verify(forge(header, env.claims(), raw_sign_with_signer_key(key)))


@pytest.mark.parametrize("claim", ["iss", "aud"])
async def test_wrong_issuer_or_audience_rejected(env: Env, claim: str) -> None:
    token = await env.signer.sign(env.claims(**{claim: "https://evil.example"}))
    with pytest.raises(InvalidToken):
        await env.verify(token)


async def test_audience_list_not_accepted(env: Env) -> None:
    token = await env.signer.sign(env.claims(aud=[env.settings.audience, "other"]))
    with pytest.raises(InvalidToken):
        await env.verify(token)


@pytest.mark.parametrize("claim", ["exp", "iat", "iss", "aud", "sub", "jti"])
async def test_missing_required_claim_rejected(env: Env, claim: str) -> None:
    claims = env.claims()
    del claims[claim]
    token = await env.signer.sign(claims)
    with pytest.raises(InvalidToken):
        await env.verify(token)


async def test_expired_beyond_leeway_rejected(env: Env) -> None:
    token = await env.signer.sign(env.claims())
    env.clock.advance(env.settings.access_token_ttl + env.settings.leeway)
    with pytest.raises(InvalidToken, match="expired"):
        await env.verify(token)


async def test_expired_within_leeway_accepted(env: Env) -> None:
    token = await env.signer.sign(env.claims())
    env.clock.advance(env.settings.access_token_ttl + env.settings.leeway - 1)
    assert (await env.verify(token))["sub"] == "user-1"


async def test_issued_in_the_future_rejected(env: Env) -> None:
    now = int(env.clock.now().timestamp())
    token = await env.signer.sign(env.claims(iat=now + env.settings.leeway + 60))
    with pytest.raises(InvalidToken):
        await env.verify(token)


async def test_non_integer_exp_rejected(env: Env) -> None:
    token = await env.signer.sign(env.claims(exp="tomorrow"))
    with pytest.raises(InvalidToken):
        await env.verify(token)


async def test_tampered_payload_rejected(env: Env) -> None:
    token = await env.signer.sign(env.claims())
    h, p, s = token.split(".")
    claims = json.loads(b64url_decode(p))
    claims["role"] = "superadmin"
    with pytest.raises(InvalidToken):
        await env.verify(".".join([h, b64url(json.dumps(claims).encode()), s]))


async def test_tampered_signature_rejected(env: Env) -> None:
    token = await env.signer.sign(env.claims())
    h, p, s = token.split(".")
    sig = bytearray(b64url_decode(s))
    sig[len(sig) // 2] ^= 0x01
    with pytest.raises(InvalidToken):
        await env.verify(".".join([h, p, b64url(bytes(sig))]))
    with pytest.raises(InvalidToken):
        await env.verify(".".join([h, p, b64url(bytes(sig[:-1]))]))


@pytest.mark.parametrize("claimed_alg", [*ALGS, "ES256", "PS256", "EdDSA"])
async def test_header_alg_other_than_key_alg_rejected(env: Env, claimed_alg: str) -> None:
    """An ML-DSA token whose header says RS256, an RS256 token claiming ML-DSA, etc."""
    if claimed_alg == env.settings.algorithm:
        pytest.skip("same algorithm")
    token = await env.signer.sign(env.claims())
    h, p, s = token.split(".")
    header = json.loads(b64url_decode(h))
    header["alg"] = claimed_alg
    relabelled = ".".join([b64url(json.dumps(header).encode()), p, s])
    with pytest.raises(InvalidToken):
        await env.verify(relabelled)


async def test_other_key_with_copied_kid_rejected(env: Env) -> None:
    """A token signed by an attacker's key of the same algorithm, carrying our kid."""
    header = {"alg": env.settings.algorithm, "typ": "JWT", "kid": env.signer.kid}
    forged = forge(header, env.claims(), raw_sign_with(other_private_key(env.settings.algorithm)))
    with pytest.raises(InvalidToken):
        await env.verify(forged)


async def test_wrong_typ_rejected(env: Env) -> None:
    key = env.signer.verification_keys()[0]
    header = {"alg": env.settings.algorithm, "typ": "at+jwt+evil", "kid": env.signer.kid}
    with pytest.raises(InvalidToken):
        await env.verify(forge(header, env.claims(), raw_sign_with_signer_key(key)))


@pytest.mark.parametrize(
    "garbage",
    ["", "a", "a.b", "a.b.c", "....", "eyJhbGciOiJSUzI1NiJ9.e30.", "\u00e9.\u00e9.\u00e9"],
)
async def test_malformed_tokens_rejected(env: Env, garbage: str) -> None:
    with pytest.raises(InvalidToken):
        await env.verify(garbage)


async def test_foreign_crit_header_rejected(env: Env) -> None:
    key = env.signer.verification_keys()[0]
    header = {"alg": env.settings.algorithm, "kid": env.signer.kid, "crit": ["exp"], "exp": 1}
    with pytest.raises(InvalidToken):
        await env.verify(forge(header, env.claims(), raw_sign_with_signer_key(key)))


# -- interoperability -----------------------------------------------------------------------------


async def test_rs256_token_verifies_with_pyjwkclient(tmp_path: Path) -> None:
    """A stock resource server (PyJWT's ``PyJWKClient`` over our JWKS) accepts our tokens."""
    env = make_env(tmp_path, "RS256", "cryptography", FakeClock(datetime.now(UTC)))
    token = await env.signer.sign(env.claims())
    jwks = env.signer.jwks()

    class StaticJWKClient(jwt.PyJWKClient):
        def fetch_data(self) -> Any:
            return jwks

    client = StaticJWKClient("https://issuer.invalid/.well-known/jwks.json", cache_keys=False)
    signing_key = client.get_signing_key_from_jwt(token)
    claims = jwt.decode(
        token,
        signing_key,
        algorithms=["RS256"],
        audience=env.settings.audience,
        issuer=env.settings.issuer,
    )
    assert claims["sub"] == "user-1"


@pytest.mark.parametrize("alg", ["ML-DSA-65", "ML-DSA-87"])
async def test_tokens_verify_across_backends(tmp_path: Path, alg: str) -> None:
    """One seed file, two backends: each verifies the other's tokens (same kid, same JWK)."""
    if reason := liboqs_skip_reason():
        pytest.skip(reason)
    clock = FakeClock()
    ours = make_env(tmp_path, alg, "cryptography", clock)
    theirs = make_env(tmp_path, alg, "liboqs", clock)
    assert ours.signer.jwks() == theirs.signer.jwks()
    assert (await theirs.verify(await ours.signer.sign(ours.claims())))["sub"] == "user-1"
    assert (await ours.verify(await theirs.signer.sign(ours.claims())))["sub"] == "user-1"


# -- algorithm switching ----------------------------------------------------------------------------


async def test_switch_via_apply_keeps_old_tokens_valid(tmp_path: Path) -> None:
    env = make_env(tmp_path, "RS256", "cryptography")
    old_kid = env.signer.kid
    old_token = await env.signer.sign(env.claims())
    long_lived = await env.signer.sign(env.claims(exp=int(env.clock.now().timestamp()) + 10**6))

    new_settings = attrs.evolve(env.settings, algorithm="ML-DSA-65")
    await env.signer.apply_async(new_settings)
    env.settings = new_settings

    assert env.signer.algorithm == "ML-DSA-65"
    new_token = await env.signer.sign(env.claims())
    assert jwt.get_unverified_header(new_token)["alg"] == "ML-DSA-65"
    assert (await env.verify(old_token))["sub"] == "user-1"
    assert (await env.verify(new_token))["sub"] == "user-1"
    kids = [k["kid"] for k in env.signer.jwks()["keys"]]
    assert kids == [env.signer.kid, old_kid]
    assert {k["kty"] for k in env.signer.jwks()["keys"]} == {"RSA", "AKP"}

    # Still there one second before retirement + ttl + leeway ...
    env.clock.advance(env.settings.access_token_ttl + env.settings.leeway - 1)
    assert old_kid in [k["kid"] for k in env.signer.jwks()["keys"]]
    assert (await env.verify(long_lived))["sub"] == "user-1"
    # ... and gone after it: the old key no longer verifies even a token that has not expired.
    env.clock.advance(1)
    assert [k["kid"] for k in env.signer.jwks()["keys"]] == [env.signer.kid]
    with pytest.raises(InvalidToken, match="unknown kid"):
        await env.verify(long_lived)
    with pytest.raises(InvalidToken):
        await env.verify(old_token)
    assert (await env.verify(await env.signer.sign(env.claims())))["sub"] == "user-1"


async def test_switch_by_restart_keeps_old_tokens_valid(tmp_path: Path) -> None:
    clock = FakeClock()
    first = make_env(tmp_path, "RS256", "cryptography", clock)
    old_token = await first.signer.sign(first.claims())
    clock.advance(600)  # the old process ran a while before the restart
    second = make_env(tmp_path, "ML-DSA-87", "cryptography", clock)
    assert [k["kid"] for k in second.signer.jwks()["keys"]] == [second.signer.kid, first.signer.kid]
    assert (await second.verify(old_token))["sub"] == "user-1"
    clock.advance(second.settings.access_token_ttl + second.settings.leeway)
    assert [k["kid"] for k in second.signer.jwks()["keys"]] == [second.signer.kid]


async def test_switching_back_reuses_the_key(tmp_path: Path) -> None:
    env = make_env(tmp_path, "RS256", "cryptography")
    rsa_kid = env.signer.kid
    env.signer.apply(attrs.evolve(env.settings, algorithm="ML-DSA-65"))
    mldsa_kid = env.signer.kid
    env.signer.apply(env.settings)
    assert env.signer.kid == rsa_kid
    assert [k["kid"] for k in env.signer.jwks()["keys"]] == [rsa_kid, mldsa_kid]


async def test_apply_without_changes_keeps_single_key(tmp_path: Path) -> None:
    env = make_env(tmp_path, "ML-DSA-65", "cryptography")
    env.signer.apply(attrs.evolve(env.settings, access_token_ttl=60))
    assert len(env.signer.jwks()["keys"]) == 1


async def test_retired_window_uses_the_longer_ttl(tmp_path: Path) -> None:
    """Lowering the ttl in the same refresh must not cut off tokens issued with the old ttl."""
    env = make_env(tmp_path, "RS256", "cryptography")
    old_kid = env.signer.kid
    env.signer.apply(attrs.evolve(env.settings, algorithm="ML-DSA-65", access_token_ttl=60))
    env.clock.advance(env.settings.access_token_ttl + env.settings.leeway - 1)
    assert old_kid in [k["kid"] for k in env.signer.jwks()["keys"]]


async def test_workers_sharing_a_key_dir_adopt_each_others_new_key(tmp_path: Path) -> None:
    """Worker A applies a new algorithm first; worker B still verifies A's new tokens."""
    clock = FakeClock()
    a = make_env(tmp_path, "RS256", "cryptography", clock)
    b = make_env(tmp_path, "RS256", "cryptography", clock)
    a.signer.apply(attrs.evolve(a.settings, algorithm="ML-DSA-65"))
    token = await a.signer.sign(a.claims())
    assert (await b.verify(token))["sub"] == "user-1"
    assert a.signer.kid in [k["kid"] for k in b.signer.jwks()["keys"]]
    # Unknown kids re-read keys.json at most every few seconds, not on every request.
    with pytest.raises(InvalidToken, match="unknown kid"):
        await b.verify(token.replace(token.split(".")[0], b64url(b'{"alg":"RS256","kid":"x"}')))


#  -- several algorithms at once (docs/reference/tokens-and-sessions.md)
# ---------------------------------------


@pytest.mark.parametrize("default", ["RS256", "ML-DSA-65"])
async def test_several_algorithms_each_verified_with_its_own_key(
    tmp_path: Path, default: str
) -> None:
    """Every listed algorithm signs with its own key and verifies; a token relabelled with
    another listed algorithm — with its own kid or the other key's — is refused (RFC 8725)."""
    algs = ("RS256", "ML-DSA-65", "ML-DSA-87")
    settings = AuthSettings(algorithm=default, algorithms=algs, key_dir=str(tmp_path / "keys"))
    seen: list[str] = []
    clock = FakeClock()
    signer = JwtSigner.from_settings(settings, clock, on_verified=seen.append)
    env = Env(signer, settings, clock, tmp_path / "keys")
    kids = signer.signing_kids()
    assert list(kids) == [default, *(a for a in algs if a != default)]
    assert {k["kid"] for k in signer.jwks()["keys"]} == set(kids.values())
    tokens = {alg: await signer.sign(env.claims(), alg=alg) for alg in algs}
    assert (
        json.loads(b64url_decode((await signer.sign(env.claims())).split(".")[0]))["alg"] == default
    )
    for alg, token in tokens.items():
        h, p, s = token.split(".")
        header = json.loads(b64url_decode(h))
        assert (header["alg"], header["kid"]) == (alg, kids[alg])
        assert (await env.verify(token))["sub"] == "user-1"
        for other in algs:
            if other == alg:
                continue
            for kid in (kids[alg], kids[other]):
                forged = {**header, "alg": other, "kid": kid}
                with pytest.raises(InvalidToken):
                    await env.verify(".".join([b64url(json.dumps(forged).encode()), p, s]))
    assert sorted(seen) == sorted(algs)
