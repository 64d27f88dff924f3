"""The dependency-injector container: configuration → adapters → use cases.

The only place that names concrete adapters. ``storage.backend`` selects the UnitOfWork
(memory | sqlite | postgres). Tests build ``Container(config=providers.Object(cfg))``.
"""

from __future__ import annotations

from operator import attrgetter

from dependency_injector import containers, providers

from adapters.clock import SystemClock
from adapters.crypto.bcrypt_hasher import BcryptHasher
from adapters.crypto.jwt_signer import JwtSigner
from adapters.email_address import normalize_email
from adapters.events.inprocess import InProcessEventBus
from adapters.persistence.memory import MemoryLoginAttempts, MemoryUnitOfWork
from adapters.persistence.postgres import PostgresUnitOfWork
from adapters.persistence.sqlite import SqliteUnitOfWork
from application import admin
from application.auth import AuthService
from application.settings import Live
from application.throttle import LoginThrottle
from entrypoints.config import Config


def _live_auth(config: Config) -> Live:  # type: ignore[type-arg]
    return Live(config.auth)


class Container(containers.DeclarativeContainer):
    """Wires the service. Every provider is a singleton per container (one per process)."""

    config = providers.Object(Config())
    """The configuration read at start (storage and server changes need a restart)."""

    live_config = providers.Singleton(Live, config)
    """The configuration in force; replaced by a config refresh."""

    auth_settings = providers.Singleton(_live_auth, config)
    """``Live[AuthSettings]``: the ``auth`` prefix in force, read by the use cases per call."""

    clock = providers.Singleton(SystemClock)
    bus = providers.Singleton(InProcessEventBus)

    uow = providers.Selector(
        providers.Callable(attrgetter("storage.backend"), config),
        memory=providers.Singleton(MemoryUnitOfWork),
        sqlite=providers.Singleton(SqliteUnitOfWork, config.provided.storage.sqlite_path),
        postgres=providers.Singleton(
            PostgresUnitOfWork,
            config.provided.storage.postgres_dsn,
            config.provided.storage.pool_min_size,
            config.provided.storage.pool_max_size,
        ),
    )

    hasher = providers.Singleton(BcryptHasher, auth_settings)
    signer = providers.Singleton(JwtSigner.from_settings, config.provided.auth, clock)
    login_attempts = providers.Singleton(MemoryLoginAttempts)
    throttle = providers.Singleton(LoginThrottle, login_attempts, clock, auth_settings)

    auth_service = providers.Singleton(
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

    # Users, roles, groups and members (contract section 3).
    list_users = providers.Singleton(admin.ListUsers, uow)
    get_user = providers.Singleton(admin.GetUser, uow)
    set_role = providers.Singleton(admin.SetRole, uow, bus)
    move_user = providers.Singleton(admin.MoveUser, uow, bus)
    list_groups = providers.Singleton(admin.ListGroups, uow)
    get_group = providers.Singleton(admin.GetGroup, uow)
    create_group = providers.Singleton(admin.CreateGroup, uow, clock)
    rename_group = providers.Singleton(admin.RenameGroup, uow)
    delete_group = providers.Singleton(admin.DeleteGroup, uow, bus)
    add_member = providers.Singleton(admin.AddMember, uow, bus, clock)
    remove_member = providers.Singleton(admin.RemoveMember, uow, bus)

    # The operator's command line on the box.
    create_superadmin = providers.Singleton(
        admin.CreateSuperadmin,
        uow=uow,
        bus=bus,
        hasher=hasher,
        clock=clock,
        settings=auth_settings,
        normalize_email=providers.Object(normalize_email),
    )
    set_role_by_operator = providers.Singleton(
        admin.SetRoleByOperator, uow, bus, providers.Object(normalize_email)
    )
    set_org_by_operator = providers.Singleton(
        admin.SetOrgByOperator, uow, bus, providers.Object(normalize_email)
    )


def build_container(config: Config) -> Container:
    """A container for ``config``."""
    return Container(config=providers.Object(config))
