"""Configuration: a TOML file (one table per prefix) overridden by ``AUTHSVC_<PREFIX>__<KEY>``
environment variables, validated at start into frozen settings objects
(docs/reference/configuration.md).

The file comes from ``--config PATH`` or ``AUTHSVC_CONFIG``; none is needed. Unknown keys and bad
values raise ``ConfigError`` naming the key (e.g. ``auth.access_token_ttl``).
"""

from __future__ import annotations

import os
import tomllib
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from adapters.crypto.db_keystore import KeyEncryptionKeyError, read_key_encryption_key
from application.federation.settings import FederationSettings
from application.forward_auth.settings import ForwardAuthSettings
from application.integration.settings import WebhooksSettings
from application.oauth.settings import OidcSettings
from application.passkeys.settings import WebAuthnConfigError, WebAuthnSettings, relying_party
from application.shared.settings import AuditSettings, AuthSettings, EmailSettings, OAuthSettings
from domain.errors import ValidationFailed
from entrypoints.config.converters import make_converter, structure
from entrypoints.config.infrastructure import (
    EventsSettings,
    ServerSettings,
    StorageSettings,
    TelemetrySettings,
)
from entrypoints.http.pages.settings import UiSettings
from service_actuator import ActuatorSettings

ENV_PREFIX = "AUTHSVC_"
CONFIG_PATH_ENV = "AUTHSVC_CONFIG"
RESTART_PREFIXES = ("storage", "server", "events")
"""Prefixes whose change needs a restart (listed under ``restart_required`` by a refresh)."""
LIVE_KEYS = {"server": frozenset({"anonymous_write_rate", "anonymous_write_burst"})}
"""Keys of a ``RESTART_PREFIXES`` prefix that a refresh puts in force at once (read live)."""

_NOT_SETTINGS = {"AUTHSVC_CONFIG", "AUTHSVC_BOOTSTRAP_PASSWORD"}


class ConfigError(Exception):
    """The configuration is invalid. ``key`` is the offending dotted key (``auth.algorithm``),
    or the file path when the file itself cannot be read or parsed."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"invalid configuration: {key}: {message}")
        self.key = key
        self.message = message


@attrs.frozen
class Config:
    """The whole configuration, one settings object per prefix."""

    auth: AuthSettings = attrs.Factory(AuthSettings)
    storage: StorageSettings = attrs.Factory(StorageSettings)
    server: ServerSettings = attrs.Factory(ServerSettings)
    actuator: ActuatorSettings = attrs.Factory(ActuatorSettings)
    telemetry: TelemetrySettings = attrs.Factory(TelemetrySettings)
    events: EventsSettings = attrs.Factory(EventsSettings)
    email: EmailSettings = attrs.Factory(EmailSettings)
    audit: AuditSettings = attrs.Factory(AuditSettings)
    oauth: OAuthSettings = attrs.Factory(OAuthSettings)
    webauthn: WebAuthnSettings = attrs.Factory(WebAuthnSettings)
    oidc: OidcSettings = attrs.Factory(OidcSettings)
    ui: UiSettings = attrs.Factory(UiSettings)
    federation: FederationSettings = attrs.Factory(FederationSettings)
    forward_auth: ForwardAuthSettings = attrs.Factory(ForwardAuthSettings)
    webhooks: WebhooksSettings = attrs.Factory(WebhooksSettings)

    def prefixes(self) -> dict[str, Any]:
        """``{prefix: settings object}`` for every prefix."""
        return {f.name: getattr(self, f.name) for f in attrs.fields(Config)}

    def changed_prefixes(self, other: Config) -> list[str]:
        """The prefixes whose settings differ between ``self`` and ``other``, sorted."""
        mine, theirs = self.prefixes(), other.prefixes()
        return sorted(p for p in mine if mine[p] != theirs[p])

    def restart_required(self, other: Config) -> list[str]:
        """The ``RESTART_PREFIXES`` whose change from ``self`` to ``other`` needs a restart:
        those changed in a key other than their ``LIVE_KEYS``, sorted."""
        mine, theirs = self.prefixes(), other.prefixes()
        needed = []
        for prefix in RESTART_PREFIXES:
            live = LIVE_KEYS.get(prefix, frozenset())
            old, new = attrs.asdict(mine[prefix]), attrs.asdict(theirs[prefix])
            if any(old[k] != new[k] for k in old if k not in live):
                needed.append(prefix)
        return sorted(needed)


_converter = make_converter(forbid_extra_keys=True)


def _field_types(prefix: str) -> dict[str, Any]:
    cls = typing.get_type_hints(Config)[prefix]
    return typing.get_type_hints(cls)


def _env_value(raw: str, target: Any) -> Any:
    """Read an environment string as the TOML value it spells, unless the field is a string."""
    if target is str:
        return raw
    if target == tuple[str, ...] and not raw.lstrip().startswith("["):
        return [item.strip() for item in raw.split(",") if item.strip()]
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw  # structuring then names the key and the expected type


def _from_env(environ: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    tables: dict[str, dict[str, Any]] = {}
    prefixes = {f.name for f in attrs.fields(Config)}
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX) or name in _NOT_SETTINGS or "__" not in name:
            continue
        if name.startswith("AUTHSVC_TEST_"):
            continue
        prefix, _, key = name[len(ENV_PREFIX) :].lower().partition("__")
        dotted = f"{prefix}.{key}"
        if prefix not in prefixes:
            raise ConfigError(dotted, f"unknown prefix (from {name})")
        types = _field_types(prefix)
        if key not in types:
            raise ConfigError(dotted, f"unknown key (from {name})")
        tables.setdefault(prefix, {})[key] = _env_value(raw, types[key])
    return tables


def _read_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    try:
        with Path(path).expanduser().open("rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read the file: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), f"not valid TOML: {exc}") from None


def check_workers(workers: int, backend: str, key: str = "server.workers") -> None:
    """Several worker processes need one shared database: raise ``ConfigError`` naming ``key``
    for ``workers > 1`` with ``storage.backend = "memory"`` (each process would hold its own
    users, sessions and throttling counts)."""
    if workers > 1 and backend == "memory":
        raise ConfigError(
            key, "several workers need a shared database; storage.backend = memory is per process"
        )


def check_oauth_resources(config: Config) -> None:
    """``auth.audience`` is always a shared resource accepting any scope
    (docs/reference/oauth-and-oidc.md): registering it again in ``oauth.resources`` (for one
    organization, or with scopes) would say otherwise, so it raises ``ConfigError`` naming
    ``oauth.resources``."""
    if any(r.audience == config.auth.audience for r in config.oauth.resources):
        raise ConfigError(
            "oauth.resources", "auth.audience is always shared and accepts any scope; "
            "do not register it as a resource",
        )  # fmt: skip


def check_federation(config: Config) -> None:
    """Each ``client_secret_file`` of ``[[federation.providers]]`` names a readable, non-empty
    file (read again on use, so a rotated secret needs no restart). Raises ``ConfigError``
    naming ``federation.providers[i].client_secret_file``; the secret is never in the message."""
    for number, provider in enumerate(config.federation.providers):
        if not provider.client_secret_file:
            continue
        key = f"federation.providers[{number}].client_secret_file"
        try:
            text = Path(provider.client_secret_file).expanduser().read_text("utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(key, f"cannot read the file: {exc}") from None
        if not text:
            raise ConfigError(key, "the file is empty")


def check_forward_auth(config: Config) -> None:
    """``[[forward_auth.rules]]`` decide by the request a proxy forwards (``X-Forwarded-Host``
    and ``X-Forwarded-Uri``), believed only from ``server.trusted_proxies``: rules without a
    trusted proxy could never apply, so they raise ``ConfigError`` naming
    ``forward_auth.rules`` (docs/reference/forward-auth.md)."""
    if config.forward_auth.rules and not config.server.trusted_proxies:
        raise ConfigError(
            "forward_auth.rules", "rules need server.trusted_proxies (the proxies whose "
            "X-Forwarded-* headers name the request they ask about)",
        )  # fmt: skip


def key_store_of(config: Config) -> str:
    """The key store in force: ``auth.key_store``, with ``auto`` meaning ``database`` when
    ``storage.backend = "postgres"`` and ``file`` otherwise."""
    if config.auth.key_store != "auto":
        return config.auth.key_store
    return "database" if config.storage.backend == "postgres" else "file"


def check_key_store(config: Config) -> None:
    """The key store's settings are usable: the database store needs ``storage.backend``
    postgres or sqlite and a key-encryption key (``auth.key_encryption_key`` or
    ``auth.key_encryption_key_file``, one of them; the file is read now); a key-encryption key
    that is set must be well-formed even where unused. Raises ``ConfigError`` naming the key."""
    auth = config.auth
    if key_store_of(config) == "database":
        if config.storage.backend == "memory":
            raise ConfigError(
                "auth.key_store", "the database key store needs storage.backend postgres or sqlite"
            )
        read_kek(auth)
    elif auth.key_encryption_key or auth.key_encryption_key_file:
        read_kek(auth)


def read_kek(auth: AuthSettings) -> bytes:
    """The 32-byte key-encryption key of ``auth`` (inline or from its file). Raises
    ``ConfigError`` naming ``auth.key_encryption_key`` or ``auth.key_encryption_key_file``."""
    try:
        return read_key_encryption_key(auth.key_encryption_key, auth.key_encryption_key_file)
    except KeyEncryptionKeyError as exc:
        raise ConfigError(exc.key, exc.message) from None


def derived_defaults(config: Config, given: Mapping[str, Any]) -> Config:
    """``config`` with the defaults that follow other keys, for those not in ``given`` (the
    merged file and environment tables): ``auth.issuer`` = ``http://localhost:{server.port}``
    (so a changed port moves discovery, tokens, mail links and the WebAuthn origin with it);
    ``email.verify_url`` / ``email.reset_url`` = ``{auth.issuer}/ui/verify?token={token}`` /
    ``{auth.issuer}/ui/reset?token={token}``, ``email.change_url`` =
    ``{auth.issuer}/ui/account/email/confirm?token={token}`` (the hosted pages: a link clicked
    in a mail client opens a page; RFC 8414 §2 for the issuer). Raises ``ValueError`` from the
    settings' validators."""
    auth, email = given.get("auth", {}), given.get("email", {})
    if "issuer" not in auth:
        issuer = f"http://localhost:{config.server.port}"
        config = attrs.evolve(config, auth=attrs.evolve(config.auth, issuer=issuer))
    base = config.auth.issuer.rstrip("/").replace("{", "{{").replace("}", "}}")
    verify = email.get("verify_url", f"{base}/ui/verify?token={{token}}")
    reset = email.get("reset_url", f"{base}/ui/reset?token={{token}}")
    change = email.get("change_url", f"{base}/ui/account/email/confirm?token={{token}}")
    current = (config.email.verify_url, config.email.reset_url, config.email.change_url)
    if (verify, reset, change) != current:
        links = attrs.evolve(config.email, verify_url=verify, reset_url=reset, change_url=change)
        config = attrs.evolve(config, email=links)
    return config


def load_config(
    path: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> Config:
    """Read and validate the configuration.

    ``path`` (else ``$AUTHSVC_CONFIG``, else no file) is a TOML file with tables ``[auth]``,
    ``[storage]``, ``[server]``, ``[actuator]``, ``[telemetry]``, ``[events]``, ``[email]``,
    ``[audit]``, ``[oauth]``, ``[webauthn]``, ``[oidc]``, ``[ui]``, ``[federation]``,
    ``[forward_auth]``, ``[webhooks]``;
    ``environ`` (default ``os.environ``) overrides single keys; defaults that follow other keys
    are filled in (``derived_defaults``). The key store's settings are checked
    (``check_key_store``). Raises ``ConfigError`` naming the first bad key.
    """
    env = os.environ if environ is None else environ
    file_path = path if path is not None else env.get(CONFIG_PATH_ENV) or None
    data: dict[str, Any] = _read_file(file_path) if file_path else {}
    for prefix, table in data.items():
        if not isinstance(table, dict):
            raise ConfigError(prefix, "expected a table")
    for prefix, table in _from_env(env).items():
        data.setdefault(prefix, {}).update(table)
    try:
        config = derived_defaults(structure(_converter, data, Config), data)
    except ValidationFailed as exc:
        first = exc.errors[0]
        raise ConfigError(first.field or "(root)", first.message) from None
    except Exception as exc:  # settings' own validators (e.g. ServiceActuatorError)
        raise ConfigError(getattr(exc, "key", "(settings)"), str(exc)) from None
    check_workers(config.server.workers, config.storage.backend)
    check_oauth_resources(config)
    check_key_store(config)
    check_federation(config)
    check_forward_auth(config)
    try:
        relying_party(config.auth.issuer, config.webauthn)
    except WebAuthnConfigError as exc:
        raise ConfigError(exc.key, str(exc)) from None
    return config
