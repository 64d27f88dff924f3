"""Suite-wide fixtures: what makes thousands of fresh apps affordable on two cores.

Every end-to-end test starts a fresh app, and a fresh app with ``RS256`` generates an RSA-3072
signing key (0.2–1.5 s of CPU each, the largest single cost of the suite). Within one test
process the keys come from a small pool instead: the first ``RSA_POOL_SIZE`` requests of each
size really generate, later ones hand those keys out again in turn, so consecutive keys always
differ (a rotation still gets a new key and a new ``kid``) and every key is a real one of the
size asked for. Loading such a key from its PEM (OpenSSL checks an RSA-3072 key's primes:
about 0.3 s, twice per start) is done once per distinct PEM and the key object shared, as keys
are immutable. Servers started as separate processes generate and load their own keys as in
production.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

RSA_POOL_SIZE = 8
"""Distinct keys per (exponent, size) before the pool repeats: more than any one test rotates."""


class _RsaKeyPool:
    """``rsa.generate_private_key`` that generates the first ``size`` keys of each
    (public_exponent, key_size) and then cycles through them."""

    def __init__(self, generate: Any, size: int) -> None:
        self._generate = generate
        self._size = size
        self._keys: dict[tuple[int, int], list[rsa.RSAPrivateKey]] = {}
        self._turns: dict[tuple[int, int], Iterator[int]] = {}

    def __call__(
        self, public_exponent: int, key_size: int, backend: Any = None
    ) -> rsa.RSAPrivateKey:
        shape = (public_exponent, key_size)
        keys = self._keys.setdefault(shape, [])
        if len(keys) < self._size:
            keys.append(self._generate(public_exponent=public_exponent, key_size=key_size))
            return keys[-1]
        turn = self._turns.setdefault(shape, itertools.cycle(range(self._size)))
        return keys[next(turn)]


@pytest.fixture(autouse=True, scope="session")
def rsa_key_pool() -> Iterator[None]:
    """Serve RSA key generation in this test process from a pool (see the module's docstring)."""
    original = rsa.generate_private_key
    load = serialization.load_pem_private_key
    rsa.generate_private_key = _RsaKeyPool(original, RSA_POOL_SIZE)  # type: ignore[assignment]
    serialization.load_pem_private_key = _memoized_load(load)  # type: ignore[assignment]
    try:
        yield
    finally:
        rsa.generate_private_key = original
        serialization.load_pem_private_key = load


def _memoized_load(load: Any) -> Any:
    """``load_pem_private_key`` that parses (and validates) each distinct PEM once; a PEM
    that fails raises every time, as nothing is remembered of it."""

    @functools.lru_cache(maxsize=256)
    def cached(data: bytes, password: bytes | None) -> Any:
        return load(data, password=password)

    def load_pem_private_key(
        data: bytes, password: bytes | None, backend: Any = None, **options: Any
    ) -> Any:
        if options:
            return load(data, password=password, **options)
        return cached(bytes(data), password)

    return load_pem_private_key


@pytest.fixture(autouse=True, scope="session")
def pooled_schemas() -> Iterator[None]:
    """Drop this process's pooled PostgreSQL schemas (``tests.pg.SCHEMA_POOL``) at the end."""
    yield
    from tests.pg import SCHEMA_POOL, pg_dsn

    dsn = pg_dsn()
    if dsn is not None:
        SCHEMA_POOL.drop_all(dsn)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the tests marked ``slow`` (server processes, browsers, the schemathesis run: up to
    three minutes each) first, so that pytest-xdist's workers share them out at the start
    instead of one worker finishing the run alone while the others idle. Order within each
    group is kept."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
