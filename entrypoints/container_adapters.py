"""The adapters' half of the dependency-injector container (``entrypoints.container``): the
configuration, the clock, the event bus, telemetry, storage, the hasher, the signer, the login
throttle and the email outbox. ``Container`` extends ``Adapters`` with the use cases and the
actuator; tests override these providers on a ``Container`` by the same names."""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter, methodcaller
from typing import Any, TypeVar

from dependency_injector import containers, providers

from adapters.clock import SystemClock
from adapters.crypto.bcrypt_hasher import BcryptHasher
from adapters.crypto.jwt_signer import JwtSigner
from adapters.events.inprocess import InProcessEventBus
from adapters.mail.console import ConsoleEmailSender
from adapters.mail.smtp import ConfiguredEmailSender, SmtpEmailSender
from adapters.mail.writer import TemplateMailWriter
from adapters.metrics import ServiceMetrics, subscribe_service_metrics
from adapters.persistence.memory import MemoryLoginAttempts, MemoryStorage
from adapters.persistence.postgres import PostgresStorage
from adapters.persistence.sqlite import SqliteStorage
from application.recovery.mail import Outbox
from application.shared.settings import Live
from application.shared.throttle import LoginThrottle
from entrypoints.config import Config
from entrypoints.config.refresh import ConfigSource
from entrypoints.telemetry import Telemetry, traced
from entrypoints.wiring import Deferred, key_stores
from service_actuator.metrics import new_registry

T = TypeVar("T")


def use_case(
    telemetry: providers.Provider[Telemetry], cls: type[T], *deps: Any, **named: Any
) -> providers.Singleton[T]:
    """A singleton ``cls(*deps, **named)`` with one span per call, named after the class."""
    return providers.Singleton(
        traced, providers.Singleton(cls, *deps, **named), cls.__name__, telemetry
    )


def _client_token_ttl(live: Live[Config]) -> Callable[[], int]:
    """The client tokens' lifetime in force (``oauth.client_token_ttl``, s), read at each call:
    keys of an algorithm no longer listed verify at least that long
    (docs/reference/tokens-and-sessions.md)."""
    return lambda: live.current.oauth.client_token_ttl


def _mail_writer(live: Live[Config]) -> TemplateMailWriter:
    """The mail writer reading ``ui.templates_dir``, ``ui.locales`` and ``ui.default_locale``
    in force at each message (a configuration refresh applies to the next one)."""
    return TemplateMailWriter(
        lambda: live.current.ui.templates_dir,
        lambda: live.current.ui.locales,
        lambda: live.current.ui.default_locale,
    )


def _nats_bus(url: str, channel: str) -> Any:
    """A ``NatsEventBus`` (its client library is imported only when ``events.backend`` is
    ``nats``: a start without it loads no NATS code)."""
    from adapters.events.nats_bus import NatsEventBus

    return NatsEventBus(url, channel)


def _redis_bus(url: str, channel: str) -> Any:
    """A ``RedisEventBus`` (redis-py imported only when ``events.backend`` is ``redis``)."""
    from adapters.events.redis_bus import RedisEventBus

    return RedisEventBus(url, channel)


class Adapters(containers.DeclarativeContainer):
    """The adapters and the settings in force; every provider a singleton per container."""

    config = providers.Object(Config())
    """The configuration read at start (storage and server changes need a restart)."""

    live_config = providers.Singleton(Live, config)
    """``Live[Config]``: the one configuration in force, replaced whole by a config refresh.
    Everything that reads settings after start reads them here or through a view of it."""

    auth_settings = providers.Singleton(methodcaller("view", attrgetter("auth")), live_config)
    """``Live[AuthSettings]``: a view of ``live_config``'s ``auth`` prefix (no copy), read by the
    use cases per call."""

    config_source = providers.Object(ConfigSource())
    """Where ``config`` was read from (path, environment): a refresh reads it again."""

    clock = providers.Singleton(SystemClock)
    bus = providers.Selector(
        providers.Callable(attrgetter("events.backend"), config),
        memory=providers.Singleton(InProcessEventBus),
        nats=providers.Singleton(
            _nats_bus, config.provided.events.nats_url, config.provided.events.channel
        ),
        redis=providers.Singleton(
            _redis_bus, config.provided.events.redis_url, config.provided.events.channel
        ),
    )
    """The event bus (``events.backend``): in-process, or NATS / Redis carrying shared events to
    the other instances (started and closed with the app)."""
    telemetry = providers.Singleton(Telemetry.from_settings, config.provided.telemetry)
    """Tracing (``[telemetry]``); raises ``ConfigError`` for otlp without its package."""

    storage = providers.Selector(
        providers.Callable(attrgetter("storage.backend"), config),
        memory=providers.Singleton(MemoryStorage),
        sqlite=providers.Singleton(SqliteStorage, config.provided.storage.sqlite_path),
        postgres=providers.Singleton(
            PostgresStorage,
            config.provided.storage.postgres_dsn,
            config.provided.storage.pool_min_size,
            config.provided.storage.pool_max_size,
            providers.Callable(lambda c: c.storage.postgres_schema or None, config),
        ),
    )

    hasher = providers.Singleton(BcryptHasher, auth_settings)
    metrics_registry = providers.Singleton(new_registry)
    """This container's prometheus-client registry (None without the ``metrics`` extra)."""

    service_metrics: providers.Singleton[ServiceMetrics] = providers.Singleton(
        subscribe_service_metrics, bus, metrics_registry
    )
    """Login/refresh/token counters, subscribed to the bus; instantiate once at wiring."""

    signer = providers.Singleton(
        JwtSigner.from_settings,
        config.provided.auth,
        clock,
        providers.Singleton(key_stores, config),
        providers.Callable(_client_token_ttl, live_config),
        service_metrics.provided.token_verified,
    )
    """Signs and verifies access tokens; its keys live in ``auth.key_store`` (ADR 0015); the
    keys of an algorithm left out of ``auth.algorithms`` verify as long as a client token
    lives; each verification counts in ``authsvc_tokens_verified_total`` (section 17)."""
    deferred_signer = providers.Singleton(Deferred, signer.provider)
    """The signer, built on first use (after the storage is open and migrated)."""
    database_login_attempts = providers.Singleton(methodcaller("login_attempts"), storage)
    """Failed logins in the database: shared by every worker process and instance using it."""

    login_attempts = providers.Selector(
        providers.Callable(attrgetter("storage.backend"), config),
        memory=providers.Singleton(MemoryLoginAttempts),
        sqlite=database_login_attempts,
        postgres=database_login_attempts,
    )
    throttle = providers.Singleton(LoginThrottle, login_attempts, clock, auth_settings)

    email_settings = providers.Singleton(methodcaller("view", attrgetter("email")), live_config)
    """``Live[EmailSettings]``: a view of the ``email`` prefix in force
    (docs/reference/accounts.md)."""
    email_sender = providers.Singleton(
        ConfiguredEmailSender,
        email_settings,
        providers.Singleton(ConsoleEmailSender, config.provided.email.from_address),
        providers.Singleton(SmtpEmailSender, email_settings),
    )
    mail_writer = providers.Singleton(_mail_writer, live_config)
    """Writes each message from its templates in the request's language (docs/guides/email.md)."""
    outbox = providers.Singleton(Outbox, email_sender, bus, email_settings, mail_writer)
    """Sends messages after the commit, in the background; drained at shutdown."""
