"""The database key store's encryption (``adapters.crypto.db_keystore``) and its settings:
private keys are AES-256-GCM ciphertext under the key-encryption key — no plaintext private key
in any row —, a wrong key-encryption key fails clearly, and a start without one is refused
naming the key (docs/reference/operations.md; ADR 0015)."""

from __future__ import annotations

import base64
import sqlite3
from pathlib import Path

import pytest

from adapters.crypto.db_keystore import (
    DatabaseKeyStore,
    decrypt_material,
    encrypt_material,
    kek_id,
    parse_key_encryption_key,
)
from adapters.crypto.jwt_signer import JwtSigner
from adapters.crypto.key_records import KeyStoreError
from adapters.persistence.migrate import apply_sqlite_migrations
from application.shared.settings import AuthSettings
from entrypoints.cli import main
from entrypoints.config import ConfigError, load_config
from tests.brokers import new_kek
from tests.fakes import FakeClock

KEK = bytes(range(32))
OTHER_KEK = bytes(range(1, 33))


def db(tmp_path: Path) -> str:
    path = str(tmp_path / "authsvc.db")
    apply_sqlite_migrations(path)
    return path


def rows(path: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT * FROM signing_keys").fetchall()


@pytest.mark.parametrize("alg", ["RS256", "ML-DSA-65", "ML-DSA-87"])
def test_no_plaintext_private_key_in_the_table(tmp_path: Path, alg: str) -> None:
    path = db(tmp_path)
    store = DatabaseKeyStore.sqlite(path, KEK)
    signer = JwtSigner(AuthSettings(algorithm=alg), FakeClock(), lambda s: store)
    (record,) = store.records()
    material = store.material(record)
    assert record.kid == signer.kid
    # Search every column of every row for the material and its usual encodings.
    needles = [
        material,
        base64.b64encode(material),
        base64.urlsafe_b64encode(material).rstrip(b"="),
    ]
    if alg == "RS256":
        needles += [b"PRIVATE KEY", material[40:80]]
    else:
        needles += [material.hex().encode()]
    for row in rows(path):
        for cell in row:
            blob = cell if isinstance(cell, bytes) else str(cell).encode()
            for needle in needles:
                assert needle not in blob
    # The public JWK is there in clear, and the ciphertext is nonce + material + tag.
    (row,) = rows(path)
    assert signer.kid in str(row[2])
    assert len(row[3]) == 12 + len(material) + 16  # type: ignore[arg-type]
    assert row[4] == kek_id(KEK)


def test_a_wrong_key_encryption_key_fails_clearly(tmp_path: Path) -> None:
    path = db(tmp_path)
    store = DatabaseKeyStore.sqlite(path, KEK)
    JwtSigner(AuthSettings(algorithm="ML-DSA-65"), FakeClock(), lambda s: store)
    wrong = DatabaseKeyStore.sqlite(path, OTHER_KEK)
    with pytest.raises(KeyStoreError, match=r"encrypted under another auth\.key_encryption_key"):
        JwtSigner(AuthSettings(algorithm="ML-DSA-65"), FakeClock(), lambda s: wrong)


def test_an_altered_or_moved_ciphertext_does_not_decrypt() -> None:
    sealed = encrypt_material(KEK, "kid-1", "ML-DSA-65", b"s" * 32)
    assert decrypt_material(KEK, "kid-1", "ML-DSA-65", sealed) == b"s" * 32
    with pytest.raises(KeyStoreError, match="does not authenticate"):
        decrypt_material(KEK, "kid-2", "ML-DSA-65", sealed)  # moved to another row
    with pytest.raises(KeyStoreError, match="does not authenticate"):
        decrypt_material(KEK, "kid-1", "ML-DSA-65", sealed[:-1] + bytes([sealed[-1] ^ 1]))
    assert encrypt_material(KEK, "kid-1", "ML-DSA-65", b"s" * 32) != sealed  # fresh nonce


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "is empty"),
        ("not base64url!", "base64url"),
        (base64.urlsafe_b64encode(b"x" * 16).decode(), "32 bytes, not 16"),
    ],
)
def test_a_malformed_key_encryption_key_is_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_key_encryption_key(text)


def test_the_key_encryption_key_reads_with_or_without_padding() -> None:
    raw = bytes(range(32))
    text = base64.urlsafe_b64encode(raw).decode()
    assert parse_key_encryption_key(text) == raw
    assert parse_key_encryption_key(text.rstrip("=") + "\n") == raw


def pg_env(**extra: str) -> dict[str, str]:
    return {"AUTHSVC_STORAGE__BACKEND": "postgres",
            "AUTHSVC_STORAGE__POSTGRES_DSN": "postgresql://u@db.example/authsvc", **extra}  # fmt: skip


def test_postgres_defaults_to_the_database_store_which_needs_a_kek() -> None:
    with pytest.raises(ConfigError) as err:
        load_config(None, environ=pg_env())
    assert err.value.key == "auth.key_encryption_key"
    assert "AUTHSVC_AUTH__KEY_ENCRYPTION_KEY" in str(err.value)
    config = load_config(None, environ=pg_env(AUTHSVC_AUTH__KEY_ENCRYPTION_KEY=new_kek()))
    assert config.auth.key_store == "auto"
    assert "key_encryption_key=" not in repr(config)
    # The file store needs none.
    load_config(None, environ=pg_env(AUTHSVC_AUTH__KEY_STORE="file"))


def test_the_kek_may_come_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "kek"
    path.write_text(new_kek() + "\n")
    load_config(None, environ=pg_env(AUTHSVC_AUTH__KEY_ENCRYPTION_KEY_FILE=str(path)))
    path.write_text("short")
    with pytest.raises(ConfigError) as err:
        load_config(None, environ=pg_env(AUTHSVC_AUTH__KEY_ENCRYPTION_KEY_FILE=str(path)))
    assert err.value.key == "auth.key_encryption_key_file"
    with pytest.raises(ConfigError) as err:
        load_config(None, environ=pg_env(AUTHSVC_AUTH__KEY_ENCRYPTION_KEY_FILE=str(path),
                                         AUTHSVC_AUTH__KEY_ENCRYPTION_KEY=new_kek()))  # fmt: skip
    assert err.value.key == "auth.key_encryption_key"
    assert "not both" in err.value.message


def test_the_database_store_needs_a_database() -> None:
    with pytest.raises(ConfigError) as err:
        load_config(None, environ={"AUTHSVC_STORAGE__BACKEND": "memory",
                                   "AUTHSVC_AUTH__KEY_STORE": "database",
                                   "AUTHSVC_AUTH__KEY_ENCRYPTION_KEY": new_kek()})  # fmt: skip
    assert err.value.key == "auth.key_store"


def test_the_start_without_a_kek_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in pg_env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AUTHSVC_AUTH__KEY_ENCRYPTION_KEY", raising=False)
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("authsvc: invalid configuration: auth.key_encryption_key:")
    assert err.count("\n") == 1
