"""The MFA adapters (docs/reference/mfa-and-passkeys.md): TOTP on pyotp (RFC 6238 vectors, the ±1
step window, the step returned), the QR code, the AES-GCM sealer and its key file, recovery
codes."""

from __future__ import annotations

import base64
import os
import stat
import threading
import urllib.parse
from datetime import UTC, datetime
from pathlib import Path

import pyotp
import pytest

from adapters.crypto.key_records import KeyStoreError
from adapters.crypto.sealer import MFA_KEY_FILE, AesGcmSealer
from adapters.mfa.totp import PyotpTotp
from application.login.mfa_step import is_totp_code
from application.mfa.totp import RECOVERY_CODE_COUNT, new_recovery_code, recovery_code_hash
from application.ports import SealedSecretError

RFC_SECRET = base64.b32encode(b"12345678901234567890").decode()
"""The SHA-1 seed of RFC 6238 Appendix B, base32."""


def at(unix: int) -> datetime:
    return datetime.fromtimestamp(unix, tz=UTC)


@pytest.mark.parametrize(
    ("unix", "code"),
    [(59, "287082"), (1111111109, "081804"), (1234567890, "005924"), (2000000000, "279037")],
)
def test_rfc6238_vectors_match_at_their_step(unix: int, code: str) -> None:
    """RFC 6238 Appendix B (SHA-1; the 8-digit values' last 6 digits)."""
    assert PyotpTotp().matching_step(RFC_SECRET, code, at(unix)) == unix // 30


def test_one_step_of_skew_either_way_and_no_more() -> None:
    totp, secret = PyotpTotp(), PyotpTotp().new_secret()
    now = at(1_800_000_000)
    step = 1_800_000_000 // 30
    for offset in (-1, 0, 1):
        code = pyotp.TOTP(secret).at(now.timestamp() + 30 * offset)
        assert totp.matching_step(secret, code, now) == step + offset
    for offset in (-2, 2):
        code = pyotp.TOTP(secret).at(now.timestamp() + 30 * offset)
        found = totp.matching_step(secret, code, now)
        assert found is None or found != step + offset  # a collision elsewhere is 1 in 10^6


@pytest.mark.parametrize("code", ["", "12345", "1234567", "12345a", "١٢٣٤٥٦", " 12345", "abcdef"])
def test_codes_that_are_not_six_ascii_digits_never_match(code: str) -> None:
    assert PyotpTotp().matching_step(RFC_SECRET, code, at(59)) is None


def test_new_secrets_are_160_bit_base32_and_differ() -> None:
    secrets = {PyotpTotp().new_secret() for _ in range(20)}
    assert len(secrets) == 20
    for s in secrets:
        assert len(base64.b32decode(s)) == 20


def test_provisioning_uri_names_issuer_account_and_secret() -> None:
    uri = PyotpTotp().provisioning_uri(RFC_SECRET, "alice@example.com", "Example Co")
    parsed = urllib.parse.urlparse(uri)
    assert (parsed.scheme, parsed.netloc) == ("otpauth", "totp")
    assert urllib.parse.unquote(parsed.path) == "/Example Co:alice@example.com"
    query = urllib.parse.parse_qs(parsed.query)
    assert query["secret"] == [RFC_SECRET]
    assert query["issuer"] == ["Example Co"]
    assert pyotp.parse_uri(uri).now() == pyotp.TOTP(RFC_SECRET).now()


def test_qr_code_is_an_svg_document_that_depends_on_the_uri() -> None:
    totp = PyotpTotp()
    one = totp.qr_svg("otpauth://totp/a:b?secret=AAAA")
    assert one.startswith("<svg") and one.rstrip().endswith("</svg>")
    assert one == totp.qr_svg("otpauth://totp/a:b?secret=AAAA")
    assert one != totp.qr_svg("otpauth://totp/a:b?secret=BBBB")


# --------------------------------------------------------------------------- sealing


def test_seal_round_trips_and_never_holds_the_plaintext() -> None:
    sealer = AesGcmSealer(os.urandom(32))
    sealed = sealer.seal(RFC_SECRET.encode(), b"totp:u1")
    assert RFC_SECRET.encode() not in sealed
    assert sealer.unseal(sealed, b"totp:u1") == RFC_SECRET.encode()
    assert sealer.seal(b"x", b"c") != sealer.seal(b"x", b"c")  # a fresh nonce each time


def test_unseal_refuses_another_context_another_key_and_altered_bytes() -> None:
    key = os.urandom(32)
    sealed = AesGcmSealer(key).seal(b"secret", b"totp:u1")
    with pytest.raises(SealedSecretError):
        AesGcmSealer(key).unseal(sealed, b"totp:u2")
    with pytest.raises(SealedSecretError):
        AesGcmSealer(os.urandom(32)).unseal(sealed, b"totp:u1")
    altered = sealed[:-1] + bytes([sealed[-1] ^ 1])
    with pytest.raises(SealedSecretError):
        AesGcmSealer(key).unseal(altered, b"totp:u1")
    with pytest.raises(SealedSecretError):
        AesGcmSealer(key).unseal(b"short", b"totp:u1")


def test_key_file_is_created_0600_once_and_reused(tmp_path: Path) -> None:
    key_dir = tmp_path / "keys"
    sealed = AesGcmSealer.from_key_dir(str(key_dir)).seal(b"secret", b"c")
    path = key_dir / MFA_KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(path.read_bytes()) == 32
    assert AesGcmSealer.from_key_dir(str(key_dir)).unseal(sealed, b"c") == b"secret"


def test_concurrent_first_starts_agree_on_one_key(tmp_path: Path) -> None:
    sealers: list[AesGcmSealer] = []
    threads = [
        threading.Thread(target=lambda: sealers.append(AesGcmSealer.from_key_dir(str(tmp_path))))
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sealed = sealers[0].seal(b"secret", b"c")
    assert all(s.unseal(sealed, b"c") == b"secret" for s in sealers)


def test_a_key_file_of_the_wrong_size_is_refused(tmp_path: Path) -> None:
    (tmp_path / MFA_KEY_FILE).write_bytes(b"too short")
    os.chmod(tmp_path / MFA_KEY_FILE, 0o600)
    with pytest.raises(KeyStoreError, match="not 32"):
        AesGcmSealer.from_key_dir(str(tmp_path))


def test_a_key_file_readable_by_others_is_tightened(tmp_path: Path) -> None:
    AesGcmSealer.from_key_dir(str(tmp_path))
    os.chmod(tmp_path / MFA_KEY_FILE, 0o644)
    AesGcmSealer.from_key_dir(str(tmp_path))
    assert stat.S_IMODE((tmp_path / MFA_KEY_FILE).stat().st_mode) == 0o600


def test_kek_derived_key_is_stable_and_not_the_kek() -> None:
    kek = os.urandom(32)
    sealed = AesGcmSealer.from_kek(kek).seal(b"secret", b"c")
    assert AesGcmSealer.from_kek(kek).unseal(sealed, b"c") == b"secret"
    with pytest.raises(SealedSecretError):
        AesGcmSealer(kek).unseal(sealed, b"c")


# --------------------------------------------------------------------------- recovery codes


def test_recovery_codes_are_random_125_bit_groups() -> None:
    codes = [new_recovery_code() for _ in range(RECOVERY_CODE_COUNT * 10)]
    assert len(set(codes)) == len(codes)
    for code in codes:
        groups = code.split("-")
        assert [len(g) for g in groups] == [5, 5, 5, 5, 5]
        assert not is_totp_code(code)
        assert not set(code) & set("lo01")


def test_recovery_code_hash_ignores_case_spaces_and_hyphens() -> None:
    code = new_recovery_code()
    expected = recovery_code_hash(code)
    assert recovery_code_hash(code.upper()) == expected
    assert recovery_code_hash(code.replace("-", " ")) == expected
    assert recovery_code_hash(code.replace("-", "")) == expected
    assert recovery_code_hash(new_recovery_code()) != expected
    assert len(expected) == 64 and code not in expected
