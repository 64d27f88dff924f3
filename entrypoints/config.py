"""Configuration: a TOML file (one table per prefix) overridden by ``AUTHSVC_<PREFIX>__<KEY>``
environment variables, validated at start into frozen settings objects (contract section 5).

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

from application.settings import AuthSettings, ServerSettings, StorageSettings, TelemetrySettings
from domain.errors import ValidationFailed
from entrypoints.structuring import make_converter, structure
from service_actuator import ActuatorSettings

ENV_PREFIX = "AUTHSVC_"
CONFIG_PATH_ENV = "AUTHSVC_CONFIG"
RESTART_PREFIXES = ("storage", "server")
"""Prefixes whose change needs a restart (listed under ``restart_required`` by a refresh)."""

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

    def prefixes(self) -> dict[str, Any]:
        """``{prefix: settings object}`` for every prefix."""
        return {f.name: getattr(self, f.name) for f in attrs.fields(Config)}

    def changed_prefixes(self, other: Config) -> list[str]:
        """The prefixes whose settings differ between ``self`` and ``other``, sorted."""
        mine, theirs = self.prefixes(), other.prefixes()
        return sorted(p for p in mine if mine[p] != theirs[p])


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


def load_config(
    path: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> Config:
    """Read and validate the configuration.

    ``path`` (else ``$AUTHSVC_CONFIG``, else no file) is a TOML file with tables ``[auth]``,
    ``[storage]``, ``[server]``, ``[actuator]``, ``[telemetry]``; ``environ`` (default
    ``os.environ``) overrides single keys. Raises ``ConfigError`` naming the first bad key.
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
        return structure(_converter, data, Config)
    except ValidationFailed as exc:
        first = exc.errors[0]
        raise ConfigError(first.field or "(root)", first.message) from None
    except Exception as exc:  # settings' own validators (e.g. ServiceActuatorError)
        raise ConfigError(getattr(exc, "key", "(settings)"), str(exc)) from None
