"""Contract of the ``SigningKeyStore`` (``adapters.crypto.key_records``), over every store: the
key files (``auth.key_store = "file"``) and the ``signing_keys`` table of SQLite and PostgreSQL
(``"database"``, private keys under a key-encryption key). Also the key ring over each store:
concurrent first starts end with one key, a rotation on one ring is found by another, and the
keys sign and verify for every algorithm."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import attrs
import pytest

from adapters.crypto.db_keystore import DatabaseKeyStore
from adapters.crypto.jwt_signer import JwtSigner
from adapters.crypto.key_records import (
    KeyChanges,
    KeyRecord,
    KeyStoreError,
    NewKey,
    SigningKeyStore,
)
from adapters.crypto.keystore import KeyStore
from adapters.crypto.signing_keys import load_signing_key, mldsa_backend
from adapters.persistence.migrate import apply_postgres_migrations, apply_sqlite_migrations
from application.shared.settings import AuthSettings
from tests.fakes import FakeClock
from tests.pg import PG_SKIP_REASON, drop_pg_schema, new_schema_name, pg_dsn

STORES = ["file", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
KEK = bytes(range(32))
T0 = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)

StoreFactory = Callable[[], SigningKeyStore]


@pytest.fixture(params=STORES)
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """Opens a store (another handle on the same keys at each call)."""
    kind = request.param
    if kind == "file":
        yield lambda: KeyStore(tmp_path / "keys")
    elif kind == "sqlite":
        db = str(tmp_path / "authsvc.db")
        apply_sqlite_migrations(db)
        yield lambda: DatabaseKeyStore.sqlite(db, KEK)
    else:
        dsn = pg_dsn()
        if dsn is None:
            pytest.skip(PG_SKIP_REASON)
        schema = new_schema_name("authsvc_keys")
        apply_postgres_migrations(dsn, schema)
        try:
            yield lambda: DatabaseKeyStore.postgres(dsn, schema, KEK)
        finally:
            drop_pg_schema(dsn, schema)


def new_key(store: SigningKeyStore, alg: str = "ML-DSA-65", at: datetime = T0) -> NewKey:
    material = store.new_material(alg)
    key = load_signing_key(alg, material, lambda: mldsa_backend("cryptography"))
    return NewKey(KeyRecord(key.kid, alg, at, at), dict(key.jwk), material)


def test_a_new_store_is_empty(open_store: StoreFactory) -> None:
    assert open_store().records() == []


@pytest.mark.parametrize("alg", ["RS256", "ML-DSA-65", "ML-DSA-87"])
def test_added_keys_come_back_with_their_material(open_store: StoreFactory, alg: str) -> None:
    store = open_store()
    key = new_key(store, alg)
    after = store.update(lambda records: KeyChanges((key,)))
    (record,) = open_store().records()
    assert after == [record]
    assert (record.kid, record.alg, record.created_at, record.activates_at) == (
        key.record.kid, alg, T0, T0)  # fmt: skip
    assert record.retired_at is None and record.verify_until is None
    assert open_store().material(record) == key.material


def test_changed_times_are_stored(open_store: StoreFactory) -> None:
    store = open_store()
    key = new_key(store)
    store.update(lambda records: KeyChanges((key,)))
    later = T0 + timedelta(hours=1, microseconds=3)

    def retire(records: list[KeyRecord]) -> KeyChanges:
        return KeyChanges((), (attrs.evolve(records[0], retired_at=later, verify_until=later),))

    store.update(retire)
    (record,) = open_store().records()
    assert record.retired_at == later and record.verify_until == later


def test_a_plan_that_raises_stores_nothing(open_store: StoreFactory) -> None:
    store = open_store()
    key = new_key(store)

    def refuse(records: list[KeyRecord]) -> KeyChanges:
        raise RuntimeError("refused")

    with pytest.raises(RuntimeError):
        store.update(refuse)
    assert store.records() == []
    store.update(lambda records: KeyChanges((key,)))
    assert len(store.records()) == 1


def test_concurrent_updates_see_each_other(open_store: StoreFactory) -> None:
    """The plan runs under the store's exclusive lock: of eight writers that each add a key
    only to an empty store, exactly one adds it."""
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def writer() -> None:
        store = open_store()
        key = new_key(store)
        barrier.wait()
        try:
            store.update(lambda records: KeyChanges() if records else KeyChanges((key,)))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(open_store().records()) == 1


def test_material_of_an_unknown_key_is_an_error(open_store: StoreFactory) -> None:
    store = open_store()
    key = new_key(store)
    with pytest.raises(KeyStoreError):
        store.material(attrs.evolve(key.record, ref="missing.seed"))


# --------------------------------------------------------------------------- the ring over it


def settings_for(alg: str, tmp: Path, **kw: object) -> AuthSettings:
    return AuthSettings(algorithm=alg, key_dir=str(tmp / "keys"), **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("alg", ["RS256", "ML-DSA-65", "ML-DSA-87"])
def test_concurrent_first_starts_end_with_one_key(
    open_store: StoreFactory, tmp_path: Path, alg: str
) -> None:
    barrier = threading.Barrier(4)
    signers: list[JwtSigner] = []

    def start() -> None:
        store = open_store()
        barrier.wait()
        signers.append(JwtSigner(settings_for(alg, tmp_path), FakeClock(), lambda s: store))

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(signers) == 4
    assert len({s.kid for s in signers}) == 1
    assert len(open_store().records()) == 1
    assert len({str(s.jwks()) for s in signers}) == 1


async def test_a_rotation_on_one_ring_is_found_by_another(
    open_store: StoreFactory, tmp_path: Path
) -> None:
    clock = FakeClock()
    settings = settings_for("ML-DSA-65", tmp_path, key_publish_ahead=60)
    store_a, store_b = open_store(), open_store()
    a = JwtSigner(settings, clock, lambda s: store_a)
    b = JwtSigner(settings, clock, lambda s: store_b)
    old = a.kid
    record = await a.rotate_keys()
    assert await b.refresh_keys()
    assert [k["kid"] for k in b.jwks()["keys"]] == [old, record.kid]
    assert b.jwks() == a.jwks()
    clock.advance(60)
    assert a.kid == b.kid == record.kid


async def test_several_algorithms_share_one_store_and_a_dropped_one_retires(
    open_store: StoreFactory, tmp_path: Path
) -> None:
    """docs/reference/tokens-and-sessions.md over every store: a signing key per listed algorithm,
    found by a second ring; rotation of one algorithm leaves the other's key alone; an algorithm
    dropped from the list stops signing at once and leaves the JWKS once its tokens expired."""
    clock = FakeClock()
    both = settings_for("RS256", tmp_path, algorithms=("RS256", "ML-DSA-65"), key_publish_ahead=60)
    store_a, store_b = open_store(), open_store()
    a = JwtSigner(both, clock, lambda s: store_a)
    b = JwtSigner(both, clock, lambda s: store_b)
    assert a.signing_kids() == b.signing_kids() and list(a.signing_kids()) == ["RS256", "ML-DSA-65"]
    rs_kid = a.signing_kids()["RS256"]
    record = await a.rotate_keys(alg="ML-DSA-65")
    assert record.alg == "ML-DSA-65"
    assert await b.refresh_keys()
    clock.advance(60)
    assert b.signing_kids() == {"RS256": rs_kid, "ML-DSA-65": record.kid}

    pq_only = settings_for("ML-DSA-65", tmp_path, algorithms=("ML-DSA-65",), key_publish_ahead=60)
    await b.apply_async(pq_only)
    assert b.signing_kids() == {"ML-DSA-65": record.kid}
    assert rs_kid in {k["kid"] for k in b.jwks()["keys"]}
    clock.advance(pq_only.access_token_ttl + pq_only.leeway + 1)
    await b.refresh_keys()
    assert {k["alg"] for k in b.jwks()["keys"]} == {"ML-DSA-65"}
