"""The dependency-injector container: configuration → adapters → use cases → actuator.

The only place that names concrete adapters. ``storage.backend`` selects the UnitOfWork
(memory | sqlite | postgres). Tests build ``Container(config=providers.Object(cfg))``, or
``build_container(cfg, config_path=..., environ=...)`` when a refresh must re-read the source.

Every use case is wrapped by ``entrypoints.telemetry.traced`` (one span per call). The actuator
(contract section 4) gets the database and signing-key readiness indicators, the bearer-token
authorizer, the config reloader and the service's own metrics registry.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from operator import attrgetter, methodcaller
from typing import Any, TypeVar

from dependency_injector import containers, providers

from adapters.clock import SystemClock
from adapters.crypto.bcrypt_hasher import BcryptHasher
from adapters.crypto.jwt_signer import JwtSigner
from adapters.email_address import normalize_email
from adapters.events.inprocess import InProcessEventBus
from adapters.health import DatabaseHealth, SigningKeyHealth
from adapters.metrics import ServiceMetrics, subscribe_service_metrics
from adapters.persistence.memory import MemoryLoginAttempts, MemoryUnitOfWork
from adapters.persistence.postgres import PostgresUnitOfWork
from adapters.persistence.sqlite import SqliteUnitOfWork
from application import admin
from application.auth import AuthService
from application.ports import UnitOfWork
from application.settings import Live
from application.throttle import LoginThrottle
from entrypoints.config import Config
from entrypoints.http.actuator_routes import ServiceInfo, make_authorizer
from entrypoints.reload import (
    ConfigReloader,
    ConfigSource,
    check_servable,
    subscribe_config_consumers,
)
from entrypoints.telemetry import Telemetry, traced
from service_actuator import Actuator
from service_actuator.metrics import new_registry


def _live_auth(config: Config) -> Live:  # type: ignore[type-arg]
    return Live(config.auth)


def _actuator(
    config: Config,
    live_config: Live[Config],
    uow: UnitOfWork,
    signer: JwtSigner,
    auth_service: AuthService,
    reloader: ConfigReloader,
    registry: object,
) -> Actuator:
    """The actuator of contract section 4 (distribution ``authsvc``; readiness: db, signingKey).

    Raises ``ServiceActuatorError`` when ``PROMETHEUS_MULTIPROC_DIR`` names no directory.
    """
    return Actuator(
        config.actuator,
        distribution="authsvc",
        readiness_indicators=[
            DatabaseHealth(uow, config.storage.backend),
            SigningKeyHealth(signer),
        ],
        info_contributors=[ServiceInfo(live_config, config, signer)],
        authorizer=make_authorizer(auth_service),
        reloader=reloader,
        registry=registry,
    )


T = TypeVar("T")


def _use_case(
    telemetry: providers.Provider[Telemetry], cls: type[T], *deps: Any, **named: Any
) -> providers.Singleton[T]:
    """A singleton ``cls(*deps, **named)`` with one span per call, named after the class."""
    return providers.Singleton(
        traced, providers.Singleton(cls, *deps, **named), cls.__name__, telemetry
    )


class Container(containers.DeclarativeContainer):
    """Wires the service. Every provider is a singleton per container (one per process)."""

    config = providers.Object(Config())
    """The configuration read at start (storage and server changes need a restart)."""

    live_config = providers.Singleton(Live, config)
    """The configuration in force; replaced by a config refresh."""

    auth_settings = providers.Singleton(_live_auth, config)
    """``Live[AuthSettings]``: the ``auth`` prefix in force, read by the use cases per call."""

    config_source = providers.Object(ConfigSource())
    """Where ``config`` was read from (path, environment): a refresh reads it again."""

    clock = providers.Singleton(SystemClock)
    bus = providers.Singleton(InProcessEventBus)
    telemetry = providers.Singleton(Telemetry.from_settings, config.provided.telemetry)
    """Tracing (``[telemetry]``); raises ``ConfigError`` for otlp without its package."""

    uow = providers.Selector(
        providers.Callable(attrgetter("storage.backend"), config),
        memory=providers.Singleton(MemoryUnitOfWork),
        sqlite=providers.Singleton(SqliteUnitOfWork, config.provided.storage.sqlite_path),
        postgres=providers.Singleton(
            PostgresUnitOfWork,
            config.provided.storage.postgres_dsn,
            config.provided.storage.pool_min_size,
            config.provided.storage.pool_max_size,
            providers.Callable(lambda c: c.storage.postgres_schema or None, config),
        ),
    )

    hasher = providers.Singleton(BcryptHasher, auth_settings)
    signer = providers.Singleton(JwtSigner.from_settings, config.provided.auth, clock)
    database_login_attempts = providers.Singleton(methodcaller("login_attempts"), uow)
    """Failed logins in the database: shared by every worker process and instance using it."""

    login_attempts = providers.Selector(
        providers.Callable(attrgetter("storage.backend"), config),
        memory=providers.Singleton(MemoryLoginAttempts),
        sqlite=database_login_attempts,
        postgres=database_login_attempts,
    )
    throttle = providers.Singleton(LoginThrottle, login_attempts, clock, auth_settings)

    auth_service = _use_case(
        telemetry,
        AuthService,
        uow=uow,
        hasher=hasher,
        signer=signer,
        bus=bus,
        clock=clock,
        settings=auth_settings,
        normalize_email=providers.Object(normalize_email),
        throttle=throttle,
    )

    # Users, roles, groups and members (contract section 3); one span per call.
    list_users = _use_case(telemetry, admin.ListUsers, uow)
    get_user = _use_case(telemetry, admin.GetUser, uow)
    set_role = _use_case(telemetry, admin.SetRole, uow, bus)
    move_user = _use_case(telemetry, admin.MoveUser, uow, bus)
    list_groups = _use_case(telemetry, admin.ListGroups, uow)
    get_group = _use_case(telemetry, admin.GetGroup, uow)
    create_group = _use_case(telemetry, admin.CreateGroup, uow, clock)
    rename_group = _use_case(telemetry, admin.RenameGroup, uow)
    delete_group = _use_case(telemetry, admin.DeleteGroup, uow, bus)
    add_member = _use_case(telemetry, admin.AddMember, uow, bus, clock)
    remove_member = _use_case(telemetry, admin.RemoveMember, uow, bus)

    # The operator's command line on the box.
    create_superadmin = _use_case(
        telemetry,
        admin.CreateSuperadmin,
        uow=uow,
        bus=bus,
        hasher=hasher,
        clock=clock,
        settings=auth_settings,
        normalize_email=providers.Object(normalize_email),
    )
    set_role_by_operator = _use_case(
        telemetry, admin.SetRoleByOperator, uow, bus, providers.Object(normalize_email)
    )
    set_org_by_operator = _use_case(
        telemetry, admin.SetOrgByOperator, uow, bus, providers.Object(normalize_email)
    )

    # Actuator (contract section 4), metrics and configuration refresh.
    metrics_registry = providers.Singleton(new_registry)
    """This container's prometheus-client registry (None without the ``metrics`` extra)."""

    service_metrics: providers.Singleton[ServiceMetrics] = providers.Singleton(
        subscribe_service_metrics, bus, metrics_registry
    )
    """Login/refresh/token counters, subscribed to the bus; instantiate once at wiring."""

    reloader = providers.Singleton(
        ConfigReloader, live_config, bus, config_source, providers.Object(check_servable)
    )
    actuator = providers.Singleton(
        _actuator, config, live_config, uow, signer, auth_service, reloader, metrics_registry
    )
    config_subscriptions = providers.Singleton(
        subscribe_config_consumers, bus, live_config, auth_settings, signer, actuator, telemetry
    )
    """The ``ConfigChanged`` subscribers, registered once (instantiate at wiring)."""


def build_container(
    config: Config,
    *,
    config_path: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Container:
    """A container for ``config``, read from ``config_path`` and ``environ`` (None: the
    ``$AUTHSVC_CONFIG`` file and ``os.environ``), which ``POST /actuator/refresh`` re-reads."""
    return Container(
        config=providers.Object(config),
        config_source=providers.Object(ConfigSource(config_path, environ)),
    )
