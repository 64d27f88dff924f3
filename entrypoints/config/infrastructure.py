"""The infrastructure's settings, one frozen attrs class per configuration prefix
(docs/reference/configuration.md): ``storage``, ``server``, ``telemetry`` and ``events``. No use
case reads them: the container, the server and the adapters' wiring do. Durations are in
seconds."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

import attrs
from attrs import validators as v

from application.shared.settings import host_validator, url_validator

__all__ = [
    "EVENT_BACKENDS",
    "EventsSettings",
    "ServerSettings",
    "StorageSettings",
    "TelemetrySettings",
]

EVENT_BACKENDS = ("memory", "nats", "redis")
"""The ``events.backend`` values (docs/reference/operations.md)."""

_positive = v.gt(0)


def _addresses_or_networks(
    _: object, attribute: attrs.Attribute[tuple[str, ...]], value: tuple[str, ...]
) -> None:
    for entry in value:
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise ValueError(
                f"'{attribute.name}' entries must be IP addresses or CIDR networks, got {entry!r}"
            ) from None


def _origins(
    _: object, attribute: attrs.Attribute[tuple[str, ...]], value: tuple[str, ...]
) -> None:
    for entry in value:
        parts = urlsplit(entry)
        if (
            parts.scheme not in ("http", "https")
            or not parts.hostname
            or parts.path not in ("", "/")
            or parts.query
            or parts.fragment
            or parts.username
        ):
            raise ValueError(
                f"'{attribute.name}' entries must be origins (https://host[:port]), got {entry!r}"
            )


def _dsn_required(instance: StorageSettings, attribute: attrs.Attribute[str], value: str) -> None:
    if instance.backend == "postgres" and not value.strip():
        raise ValueError(f"'{attribute.name}' must be set when storage.backend is postgres")


@attrs.frozen
class StorageSettings:
    """Prefix ``storage``: ``backend`` = ``sqlite`` (file ``sqlite_path``) | ``postgres``
    (``postgres_dsn``, a ``postgresql://`` URL; pool of ``pool_min_size``..``pool_max_size``
    connections, tables in ``postgres_schema`` — empty for the server's default ``search_path``)
    | ``memory``. Expired tokens are purged every ``purge_interval`` seconds (0: only by
    ``authsvc purge``)."""

    backend: str = attrs.field(default="sqlite", validator=v.in_(("sqlite", "postgres", "memory")))
    sqlite_path: str = attrs.field(default="~/.authsvc/authsvc.db", validator=v.min_len(1))
    postgres_dsn: str = attrs.field(
        default="",
        repr=False,
        validator=[_dsn_required, url_validator("postgresql", "postgres", optional=True)],
    )
    postgres_schema: str = attrs.field(default="", validator=v.matches_re(r"([a-z_][a-z0-9_]*)?"))
    pool_min_size: int = attrs.field(default=1, validator=v.ge(0))
    pool_max_size: int = attrs.field(default=10, validator=_positive)
    purge_interval: int = attrs.field(default=3600, validator=v.ge(0))


@attrs.frozen
class ServerSettings:
    """Prefix ``server``: listen ``host`` (IP address or host name) and ``port``, request body
    limit ``max_body_bytes`` (bytes), ``trusted_proxies`` (IP addresses or CIDR networks whose
    ``X-Forwarded-For`` is believed), and graceful shutdown (docs/reference/operations.md): on
    SIGTERM readiness turns DOWN, the server keeps accepting for ``shutdown_delay`` seconds, then
    stops accepting and gives requests in flight ``shutdown_timeout`` seconds to finish.

    Slow and idle clients (docs/reference/operations.md; seconds, each > 0 and <= 3600): a request's
    headers must arrive within ``header_timeout`` (default 5) of its first byte and its body
    within ``body_timeout`` (default 10) of its headers, else 408 ``request_timeout`` and the
    connection closes; a connection with no request under way closes after
    ``keepalive_timeout`` (default 15).

    ``cors_origins`` (default none): browser origins (``https://app.example.com``) allowed to
    call the service from another origin (CORS); preflights are answered, credentials
    (cookies) are never allowed — the API takes bearer tokens.

    Writes from anyone (docs/reference/operations.md, ADR 0028): unauthenticated routes that write
    are limited per client address to ``anonymous_write_rate`` requests per second (default 10; 0
    turns the limit off; at most 1,000,000) with bursts of ``anonymous_write_burst`` (default 50,
    1–1,000,000); past it 429 ``rate_limited``. Both apply at once on refresh."""

    host: str = attrs.field(default="127.0.0.1", validator=host_validator)
    port: int = attrs.field(default=8080, validator=[v.ge(0), v.le(65535)])
    max_body_bytes: int = attrs.field(default=65_536, validator=_positive)
    trusted_proxies: tuple[str, ...] = attrs.field(default=(), validator=_addresses_or_networks)
    workers: int = attrs.field(default=1, validator=_positive)
    shutdown_delay: float = attrs.field(default=0.0, validator=[v.ge(0), v.le(3600)])
    shutdown_timeout: float = attrs.field(default=10.0, validator=[v.gt(0), v.le(3600)])
    header_timeout: float = attrs.field(default=5.0, validator=[v.gt(0), v.le(3600)])
    body_timeout: float = attrs.field(default=10.0, validator=[v.gt(0), v.le(3600)])
    keepalive_timeout: float = attrs.field(default=15.0, validator=[v.gt(0), v.le(3600)])
    cors_origins: tuple[str, ...] = attrs.field(default=(), validator=_origins)
    anonymous_write_rate: float = attrs.field(default=10.0, validator=[v.ge(0), v.le(1_000_000)])
    anonymous_write_burst: int = attrs.field(default=50, validator=[_positive, v.le(1_000_000)])


@attrs.frozen
class TelemetrySettings:
    """Prefix ``telemetry``: ``exporter`` = none | console | otlp (sent to ``otlp_endpoint``)."""

    exporter: str = attrs.field(default="none", validator=v.in_(("none", "console", "otlp")))
    otlp_endpoint: str = attrs.field(
        default="", validator=url_validator("http", "https", optional=True)
    )
    service_name: str = attrs.field(default="authsvc", validator=v.min_len(1))


def _broker_url_required(
    instance: EventsSettings, attribute: attrs.Attribute[str], value: str
) -> None:
    backend = attribute.name.removesuffix("_url")
    if instance.backend == backend and not value:
        raise ValueError(f"'{attribute.name}' must be set when events.backend is {backend}")


@attrs.frozen
class EventsSettings:
    """Prefix ``events`` (docs/reference/operations.md): which bus carries ``ConfigChanged`` and
    ``SigningKeysChanged`` to the other instances. ``backend`` = ``memory`` (default: this
    process only) | ``nats`` (``nats_url``, ``nats://`` or ``tls://``) | ``redis``
    (``redis_url``, ``redis://`` or ``rediss://``); ``channel`` is the NATS subject / Redis
    channel every instance of one service shares (dot-separated words). The URLs may hold
    credentials: never shown or logged."""

    backend: str = attrs.field(default="memory", validator=v.in_(EVENT_BACKENDS))
    nats_url: str = attrs.field(
        default="",
        repr=False,
        validator=[_broker_url_required, url_validator("nats", "tls", optional=True)],
    )
    redis_url: str = attrs.field(
        default="",
        repr=False,
        validator=[_broker_url_required, url_validator("redis", "rediss", optional=True)],
    )
    channel: str = attrs.field(
        default="authsvc.events", validator=v.matches_re(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*")
    )
