"""Configuration refresh (``POST /actuator/refresh``) and the ``ConfigChanged`` subscribers.

Contract section 4 ("Refresh") and section 6 (``ConfigChanged``); ADR 0006 ("Refresh").

:class:`ConfigReloader` is the actuator's reloader: it re-reads the configuration file and the
environment, compares the result with the configuration in force and, when it is valid and
differs, puts it in force and publishes **one** ``ConfigChanged(changed=(prefix, ...))``.
:func:`subscribe_config_consumers` registers, in one place, the components that re-read their
settings on that event:

=============  ==================================================================
prefix         what happens on ConfigChanged
=============  ==================================================================
``auth``       the signer switches key/algorithm (``JwtSigner.apply``), then the
               use cases' ``Live[AuthSettings]`` is replaced (next token, next login)
``actuator``   ``Actuator.apply_settings`` (next actuator request)
``telemetry``  ``Telemetry.apply`` (next span)
``storage``,   reported under ``restart_required``; not applied
``server``
=============  ==================================================================
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

import attrs

from adapters.crypto.jwt_signer import SignerUnavailable, mldsa_backend
from application.events import ConfigChanged
from application.ports import EventBus
from application.settings import AuthSettings, Live, TelemetrySettings
from entrypoints.config import RESTART_PREFIXES, Config, ConfigError, load_config
from entrypoints.telemetry import check_settings
from service_actuator import Actuator, InvalidConfiguration, RefreshResult

log = logging.getLogger("authsvc.config")


@attrs.frozen
class ConfigSource:
    """Where the configuration came from: the ``--config`` path (None: ``$AUTHSVC_CONFIG`` or
    no file) and the environment (None: ``os.environ``, read at each refresh)."""

    path: str | os.PathLike[str] | None = None
    environ: Mapping[str, str] | None = None

    def load(self) -> Config:
        """``load_config(path, environ)``; raises ``ConfigError`` naming the bad key."""
        path = Path(self.path) if self.path is not None else None
        return load_config(path, environ=self.environ)


class ConfigReloader:
    """The actuator's reloader: ``await reloader()`` → :class:`RefreshResult`.

    Steps: read ``source`` (in a worker thread: file I/O); validate (``check`` may raise
    ``ConfigError`` for settings that parse but cannot be served here, e.g. the OTLP exporter
    without its package); diff with ``live.current`` by prefix; if anything differs, replace
    ``live`` and publish ``ConfigChanged(changed=...)`` once. Subscribers' failures are logged
    by the bus and do not fail the refresh.

    Returns ``RefreshResult(changed=[prefix, ...] sorted, restart_required=[p in changed that
    are in RESTART_PREFIXES])``; both empty when nothing changed (no event then).

    Raises:
        InvalidConfiguration: the new configuration is invalid (``key`` names the bad key, or
            the file path when the file is unreadable or not TOML); nothing changed.
    """

    def __init__(
        self,
        live: Live[Config],
        bus: EventBus,
        source: ConfigSource,
        check: Callable[[Config], None] | None = None,
    ) -> None:
        self._live = live
        self._bus = bus
        self._source = source
        self._check = check

    async def __call__(self) -> RefreshResult:
        """Re-read, compare, apply and report; see the class docstring."""
        try:
            new = await asyncio.to_thread(self._source.load)
            if self._check is not None:
                self._check(new)
        except ConfigError as exc:
            log.warning("configuration refresh refused: %s", exc)
            raise InvalidConfiguration(exc.key, exc.message) from None
        changed = self._live.current.changed_prefixes(new)
        if not changed:
            return RefreshResult([], [])
        self._live.replace(new)
        restart = [p for p in changed if p in RESTART_PREFIXES]
        log.info("configuration refreshed: changed %s, restart required for %s", changed, restart)
        await self._bus.publish(ConfigChanged(changed=tuple(changed)))
        return RefreshResult(changed=changed, restart_required=restart)


class SettingsSigner(Protocol):
    """What the ``auth`` subscriber needs of a signer (``JwtSigner``)."""

    async def apply_async(self, settings: AuthSettings) -> None:
        """Sign new tokens per ``settings`` (may create a key); raises if it cannot."""
        ...


class SettingsTelemetry(Protocol):
    """What the ``telemetry`` subscriber needs (``entrypoints.telemetry.Telemetry``)."""

    def apply(self, settings: TelemetrySettings) -> None:
        """Trace per ``settings`` from the next span on."""
        ...


def subscribe_config_consumers(
    bus: EventBus,
    live_config: Live[Config],
    auth_settings: Live[AuthSettings],
    signer: SettingsSigner,
    actuator: Actuator,
    telemetry: SettingsTelemetry,
) -> bool:
    """Register the ``ConfigChanged`` subscribers (call once per container; the container's
    singleton provider does). Each reads the new settings from ``live_config.current``.

    Order within ``auth``: the signer first (it may create a key and raises, leaving the old
    algorithm in force, if the new one cannot be served), then the use cases' settings.

    Returns True (a value for the singleton provider to cache).
    """

    async def on_auth(event: ConfigChanged) -> None:
        if "auth" not in event.changed:
            return
        new = live_config.current.auth
        await signer.apply_async(new)
        auth_settings.replace(new)

    def on_actuator(event: ConfigChanged) -> None:
        if "actuator" in event.changed:
            actuator.apply_settings(live_config.current.actuator)

    def on_telemetry(event: ConfigChanged) -> None:
        if "telemetry" in event.changed:
            telemetry.apply(live_config.current.telemetry)

    bus.subscribe(ConfigChanged, on_auth)
    bus.subscribe(ConfigChanged, on_actuator)
    bus.subscribe(ConfigChanged, on_telemetry)
    return True


def check_servable(config: Config) -> None:
    """Refuse, before anything changes, settings that parse but cannot be served here.

    Raises ``ConfigError`` naming ``telemetry.exporter`` (``otlp`` without its package) or
    ``auth.mldsa_backend`` (an ML-DSA algorithm whose backend cannot load, e.g. ``liboqs``
    without liboqs-python).
    """
    check_settings(config.telemetry)
    if config.auth.algorithm.startswith("ML-DSA"):
        try:
            mldsa_backend(config.auth.mldsa_backend)
        except SignerUnavailable as exc:
            raise ConfigError("auth.mldsa_backend", str(exc)) from None
