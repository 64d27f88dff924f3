"""Factories the container (``entrypoints.container``) calls: the actuator, the signing-key
store, the MFA sealer, and a stand-in for objects that must be made late."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from adapters.crypto.db_keystore import DatabaseKeyStore
from adapters.crypto.key_records import SigningKeyStore
from adapters.crypto.sealer import AesGcmSealer
from adapters.federation.health import FederationHealth
from adapters.health import DatabaseHealth, EventsHealth, ReadinessState, SigningKeyHealth
from application.ports import Storage
from application.shared.settings import AuthSettings, Live
from entrypoints.actuator import (
    REFRESH_CALLER,
    ServiceInfo,
    TokenAuthority,
    actuator_authorizer,
)
from entrypoints.config import Config, key_store_of, read_kek
from entrypoints.config.refresh import ConfigReloader
from service_actuator import Actuator


def build_actuator(
    config: Config,
    live_config: Live[Config],
    storage: Storage,
    signer: Any,
    reloader: ConfigReloader,
    registry: object,
    readiness_state: ReadinessState,
    bus: Any,
    federation: FederationHealth,
    auth: Callable[[], TokenAuthority],
) -> Actuator:
    """The actuator of docs/reference/operations.md (distribution ``authsvc``; readiness: db,
    signingKey, readinessState, federation — always UP, it lists providers unreachable,
    docs/reference/federation.md; ``events`` counts for ``/actuator/health`` only). Its settings are
    read per request from ``live_config`` (the ``actuator`` prefix in force); who may see details,
    read metrics or refresh is ``domain.policy``'s call (``actuator_authorizer``, with ``auth()``
    verifying the bearer token), and the caller it allowed to refresh is the ``actor_id`` of the
    ``config.changed`` row (``REFRESH_CALLER``).

    Raises ``ServiceActuatorError`` when ``PROMETHEUS_MULTIPROC_DIR`` names no directory.
    """
    return Actuator(
        lambda: live_config.current.actuator,
        distribution="authsvc",
        indicators=[EventsHealth(bus)],
        readiness_indicators=[
            DatabaseHealth(storage, config.storage.backend),
            SigningKeyHealth(signer),
            readiness_state,
            federation,
        ],
        info_contributors=[ServiceInfo(live_config, config, signer)],
        authorizer=actuator_authorizer(auth),
        reloader=lambda: reloader(actor_id=REFRESH_CALLER.get()),
        registry=registry,
    )


def key_stores(config: Config) -> Callable[[AuthSettings], SigningKeyStore] | None:
    """The signer's key store for ``auth.key_store``: None for ``file`` (key files in
    ``auth.key_dir``, the signer's default), else the ``signing_keys`` table of the storage's
    database, private keys under the key-encryption key. Raises ``ConfigError`` for a missing
    or unusable key-encryption key."""
    if key_store_of(config) != "database":
        return None
    kek, storage = read_kek(config.auth), config.storage
    store = (
        DatabaseKeyStore.postgres(storage.postgres_dsn, storage.postgres_schema or None, kek)
        if storage.backend == "postgres"
        else DatabaseKeyStore.sqlite(storage.sqlite_path, kek)
    )
    return lambda _settings: store


class Deferred:
    """Stands for ``make()``'s result, made on first use: the actuator and the refresh steps are
    wired when the app is built, but the signer may need the database (``auth.key_store =
    "database"``), which the app opens — migrating it — only when it starts."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make

    def __getattr__(self, name: str) -> Any:
        return getattr(self._make(), name)


def make_secret_sealer(config: Config) -> AesGcmSealer:
    """The sealer of the TOTP secrets (docs/reference/mfa-and-passkeys.md; ADR 0018): with the
    database key store its key is derived from the key-encryption key (every instance shares it),
    else it is ``mfa.key`` in ``auth.key_dir`` (created on first start, mode 0600). Raises
    ``ConfigError`` for an unusable key-encryption key, ``KeyStoreError`` for an unusable key
    directory."""
    if key_store_of(config) == "database":
        return AesGcmSealer.from_kek(read_kek(config.auth))
    return AesGcmSealer.from_key_dir(config.auth.key_dir)
