"""Key files: modes, atomic creation under concurrency, reuse (``adapters.crypto.keystore``)."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import stat
import threading
from pathlib import Path

import pytest

from adapters.crypto.key_files import KEY_FILES
from adapters.crypto.key_records import KeyStoreError
from adapters.crypto.keystore import KeyStore

ALGS = tuple(KEY_FILES)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("alg", ALGS)
def test_creates_dir_0700_and_key_0600(tmp_path: Path, alg: str) -> None:
    old = os.umask(0o000)  # even with a permissive umask
    try:
        store = KeyStore(tmp_path / "a" / "keys")
        material = store.load_or_create(alg)
    finally:
        os.umask(old)
    assert mode(store.path) == 0o700
    assert mode(store.key_path(alg)) == 0o600
    if alg == "RS256":
        assert material.startswith(b"-----BEGIN PRIVATE KEY-----")  # PKCS#8 PEM
    else:
        assert len(material) == 32  # the FIPS 204 seed, binary
    assert sorted(p.name for p in store.path.iterdir()) == [KEY_FILES[alg]]


def test_rsa_key_is_3072_bits(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    key = load_pem_private_key(KeyStore(tmp_path).load_or_create("RS256"), password=None)
    assert key.key_size == 3072  # type: ignore[union-attr]


def test_tilde_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    store = KeyStore("~/.authsvc/keys")
    store.load_or_create("ML-DSA-65")
    assert (tmp_path / ".authsvc" / "keys" / "ml-dsa-65.seed").is_file()


def test_existing_dir_with_loose_mode_is_tightened(tmp_path: Path) -> None:
    d = tmp_path / "keys"
    d.mkdir(mode=0o755)
    KeyStore(d).load_or_create("ML-DSA-65")
    assert mode(d) == 0o700


@pytest.mark.parametrize("alg", ALGS)
def test_existing_key_is_reused(tmp_path: Path, alg: str) -> None:
    store = KeyStore(tmp_path)
    first = store.load_or_create(alg)
    assert KeyStore(tmp_path).load_or_create(alg) == first
    assert store.load(alg) == first


def test_loose_key_file_mode_is_tightened(tmp_path: Path) -> None:
    store = KeyStore(tmp_path)
    store.load_or_create("ML-DSA-87")
    os.chmod(store.key_path("ML-DSA-87"), 0o644)
    store.load("ML-DSA-87")
    assert mode(store.key_path("ML-DSA-87")) == 0o600


@pytest.mark.parametrize(("alg", "content"), [("ML-DSA-65", b"short"), ("RS256", b"garbage")])
def test_corrupt_key_file_is_an_error_not_overwritten(
    tmp_path: Path, alg: str, content: bytes
) -> None:
    store = KeyStore(tmp_path)
    store.ensure_dir()
    store.key_path(alg).write_bytes(content)
    with pytest.raises(KeyStoreError):
        store.load_or_create(alg)
    assert store.key_path(alg).read_bytes() == content


def test_key_path_that_is_a_directory_is_an_error(tmp_path: Path) -> None:
    store = KeyStore(tmp_path)
    store.key_path("ML-DSA-65").mkdir(parents=True)
    with pytest.raises(KeyStoreError):
        store.load_or_create("ML-DSA-65")


def test_key_dir_that_is_a_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "keys").write_text("x")
    with pytest.raises(KeyStoreError):
        KeyStore(tmp_path / "keys").load_or_create("RS256")


@pytest.mark.parametrize("alg", ALGS)
def test_concurrent_threads_end_with_one_key(tmp_path: Path, alg: str) -> None:
    barrier = threading.Barrier(8)
    results: list[bytes] = []

    def create() -> None:
        barrier.wait()
        results.append(KeyStore(tmp_path).load_or_create(alg))

    threads = [threading.Thread(target=create) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 8 and len(set(results)) == 1
    assert results[0] == KeyStore(tmp_path).load(alg)
    assert [p.name for p in tmp_path.iterdir()] == [KEY_FILES[alg]]  # no temp files left


def _create_in_process(
    key_dir: str,
    alg: str,
    barrier: multiprocessing.synchronize.Barrier,
    out: multiprocessing.Queue[str],
) -> None:
    barrier.wait()
    material = KeyStore(key_dir).load_or_create(alg)
    out.put(hashlib.sha256(material).hexdigest())


@pytest.mark.slow
@pytest.mark.parametrize("alg", ["RS256", "ML-DSA-65"])
def test_concurrent_processes_end_with_one_key(tmp_path: Path, alg: str) -> None:
    ctx = multiprocessing.get_context("fork")
    n = 4
    barrier = ctx.Barrier(n)
    out: multiprocessing.Queue[str] = ctx.Queue()
    procs = [
        ctx.Process(target=_create_in_process, args=(str(tmp_path), alg, barrier, out))
        for _ in range(n)
    ]
    for p in procs:
        p.start()
    digests = [out.get(timeout=60) for _ in range(n)]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert len(set(digests)) == 1
    on_disk = hashlib.sha256(KeyStore(tmp_path).load(alg) or b"").hexdigest()
    assert digests[0] == on_disk
    assert [p.name for p in tmp_path.iterdir()] == [KEY_FILES[alg]]


def test_state_updates_merge_under_lock(tmp_path: Path) -> None:
    store = KeyStore(tmp_path)
    barrier = threading.Barrier(10)

    def bump(i: int) -> None:
        barrier.wait()
        store.update_state(lambda s: s["keys"].__setitem__(f"k{i}", {"n": i}))

    threads = [threading.Thread(target=bump, args=(i,)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(store.read_state()["keys"]) == sorted(f"k{i}" for i in range(10))
    assert mode(tmp_path / "keys.json") == 0o600


def test_malformed_state_is_ignored(tmp_path: Path) -> None:
    store = KeyStore(tmp_path)
    store.ensure_dir()
    (tmp_path / "keys.json").write_text("{not json")
    assert store.read_state() == {"keys": {}}
