"""Settings of the service, one frozen attrs class per configuration prefix (contract section 5).

Read once per prefix from the TOML file and ``AUTHSVC_<PREFIX>__<KEY>`` environment variables by
``entrypoints.config``; swapped as a whole on ``ConfigChanged``. Durations are in seconds.
"""

from __future__ import annotations

from typing import Generic, TypeVar

import attrs
from attrs import validators as v

ALGORITHMS = ("RS256", "ML-DSA-65", "ML-DSA-87")
"""The JWS ``alg`` values ``auth.algorithm`` accepts (RFC 7518, RFC 9964)."""

_positive = v.gt(0)


@attrs.frozen
class AuthSettings:
    """Prefix ``auth``: tokens, passwords and throttling.

    ``access_token_ttl`` (s, default 900), ``refresh_token_ttl`` (s, idle limit, default 30 days),
    ``session_max_age`` (s, absolute session lifetime from login, default 90 days), ``leeway``
    (s of clock skew accepted on verification), ``bcrypt_rounds`` (log2 cost, 4..31),
    ``login_failure_window`` (s). ``key_dir`` holds the signing keys (``~`` is expanded).
    """

    algorithm: str = attrs.field(default="RS256", validator=v.in_(ALGORITHMS))
    mldsa_backend: str = attrs.field(
        default="cryptography", validator=v.in_(("cryptography", "liboqs"))
    )
    issuer: str = attrs.field(default="http://localhost:8080", validator=v.min_len(1))
    audience: str = attrs.field(default="authsvc", validator=v.min_len(1))
    access_token_ttl: int = attrs.field(default=900, validator=_positive)
    refresh_token_ttl: int = attrs.field(default=2_592_000, validator=_positive)
    session_max_age: int = attrs.field(default=7_776_000, validator=_positive)
    leeway: int = attrs.field(default=30, validator=v.ge(0))
    bcrypt_rounds: int = attrs.field(default=12, validator=[v.ge(4), v.le(31)])
    password_min_length: int = attrs.field(default=8, validator=[v.ge(1), v.le(72)])
    login_max_failures: int = attrs.field(default=5, validator=_positive)
    login_failure_window: int = attrs.field(default=900, validator=_positive)
    default_org_id: str = attrs.field(default="default", validator=v.min_len(1))
    key_dir: str = attrs.field(default="~/.authsvc/keys", validator=v.min_len(1))


def _dsn_required(instance: StorageSettings, attribute: attrs.Attribute[str], value: str) -> None:
    if instance.backend == "postgres" and not value.strip():
        raise ValueError(f"'{attribute.name}' must be set when storage.backend is postgres")


@attrs.frozen
class StorageSettings:
    """Prefix ``storage``: ``backend`` = ``sqlite`` (file ``sqlite_path``) | ``postgres``
    (``postgres_dsn``, pool of ``pool_min_size``..``pool_max_size`` connections, tables in
    ``postgres_schema`` — empty for the server's default ``search_path``) | ``memory``."""

    backend: str = attrs.field(default="sqlite", validator=v.in_(("sqlite", "postgres", "memory")))
    sqlite_path: str = attrs.field(default="~/.authsvc/authsvc.db", validator=v.min_len(1))
    postgres_dsn: str = attrs.field(default="", repr=False, validator=_dsn_required)
    postgres_schema: str = attrs.field(default="", validator=v.matches_re(r"([a-z_][a-z0-9_]*)?"))
    pool_min_size: int = attrs.field(default=1, validator=v.ge(0))
    pool_max_size: int = attrs.field(default=10, validator=_positive)


@attrs.frozen
class ServerSettings:
    """Prefix ``server``: listen address, request body limit (bytes), trusted proxies' addresses."""

    host: str = "127.0.0.1"
    port: int = attrs.field(default=8080, validator=[v.ge(0), v.le(65535)])
    max_body_bytes: int = attrs.field(default=65_536, validator=_positive)
    trusted_proxies: tuple[str, ...] = ()
    workers: int = attrs.field(default=1, validator=_positive)


@attrs.frozen
class TelemetrySettings:
    """Prefix ``telemetry``: ``exporter`` = none | console | otlp (sent to ``otlp_endpoint``)."""

    exporter: str = attrs.field(default="none", validator=v.in_(("none", "console", "otlp")))
    otlp_endpoint: str = ""
    service_name: str = "authsvc"


T = TypeVar("T")


class Live(Generic[T]):
    """The settings object in force for one prefix; ``replace`` swaps it (on ``ConfigChanged``).

    Use cases read ``.current`` on each call, so a change applies to the next request.
    """

    def __init__(self, value: T) -> None:
        self._value = value

    @property
    def current(self) -> T:
        """The settings in force now."""
        return self._value

    def replace(self, value: T) -> None:
        """Put ``value`` in force."""
        self._value = value
