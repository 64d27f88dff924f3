"""Configuration refresh (``POST /actuator/refresh``): all of it, or nothing.

docs/reference/operations.md ("Refresh") and section 6 (``ConfigChanged``); ADR 0006 ("Refresh"),
ADR 0011.

The configuration in force is **one** ``Live[Config]``. Everything that reads settings reads
through it, directly or through a per-prefix view (``Live.view``): the use cases' ``auth``, the
actuator's ``actuator``, ``/actuator/info`` and the discovery document. So swapping it is the
whole of the refresh for most prefixes. A few components hold state built from their settings
and must act; each is a :class:`RefreshStep` that *prepares* its change (and may refuse it)
before anything is swapped:

=============  =================================================================================
prefix         step
=============  =================================================================================
``telemetry``  :class:`TelemetryStep`: builds the new tracer provider (refuses ``otlp`` without its
               package); swaps it in at commit
``auth``       :class:`SignerStep`, always last: checks the ML-DSA backend, then switches the
               signer's key (``JwtSigner.apply``, which changes nothing if it refuses); commit has
               nothing left to do
``actuator``   no step: the actuator reads ``live_config.current.actuator`` per request
``ui``         no step: the hosted pages read ``live_config.current.ui`` per page, the templates'
               loader the ``templates_dir`` in force (``LiveTemplatesLoader``)
``storage``,   no step: reported under ``restart_required``; take effect at the next start —
``server``     except ``server.anonymous_write_*``, read per request (``LIVE_KEYS``)
=============  =================================================================================

:class:`ConfigReloader` (the actuator's reloader) reads the source, prepares every step of a
changed prefix in order, and only when all have accepted swaps ``Live[Config]``, commits the
steps and publishes **one** ``ConfigChanged(changed=(prefix, ...))``. A refusal discards what
was prepared and answers 422 ``invalid_configuration`` naming the key; nothing changed.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import attrs

from adapters.crypto.key_records import KeyStoreError
from adapters.crypto.mldsa import MLDSA_ALGORITHMS, SignerUnavailable
from adapters.crypto.signing_keys import mldsa_backend
from application.events.audit import record_apart
from application.events.catalog import ConfigChanged
from application.ports import Clock, EventBus, Storage
from application.shared.settings import AuthSettings, Live
from entrypoints.config import Config, ConfigError, load_config
from entrypoints.config.infrastructure import TelemetrySettings
from service_actuator import InvalidConfiguration, RefreshResult

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


def _nothing() -> None:
    return None


@attrs.frozen
class Prepared:
    """A change a :class:`RefreshStep` has made ready: ``commit()`` puts it in force and must not
    raise; ``discard()`` drops it when another step refused the refresh."""

    commit: Callable[[], None] = _nothing
    discard: Callable[[], None] = _nothing


class RefreshStep(Protocol):
    """A component that must act when its configuration ``prefix`` changes."""

    @property
    def prefix(self) -> str:
        """The configuration prefix (``auth``, ``telemetry`` ...) this step acts on."""
        ...

    async def prepare(self, old: Config, new: Config) -> Prepared:
        """Make the change from ``old`` to ``new`` ready without putting it in force.

        Raises ``ConfigError`` naming the key when ``new`` cannot be served here; then nothing
        of this step's component has changed.
        """
        ...


class ConfigReloader:
    """The actuator's reloader: ``await reloader()`` → :class:`RefreshResult`, all or nothing.

    Steps: read ``source`` (in a worker thread: file I/O); diff with ``live.current`` by prefix;
    prepare, in the given order, each of ``steps`` whose prefix changed; if every one accepted,
    replace ``live``, commit the steps, record ``config.changed`` in the audit log (
    docs/reference/operations.md; with ``storage`` and ``clock``) and publish
    ``ConfigChanged(changed=...)`` once. Subscribers' failures are logged by the bus and do not fail
    the refresh.

    Returns ``RefreshResult(changed=[prefix, ...] sorted, restart_required=[p in changed that
    are in RESTART_PREFIXES, unless only their LIVE_KEYS changed])``; both empty when nothing
    changed (no event then).

    With a broker bus (``events.backend`` nats or redis) the event reaches the other instances,
    whose ``follow`` re-reads their own source the same way (ADR 0015). Refreshes, local and
    followed, are serialised.

    Raises:
        InvalidConfiguration: the new configuration is invalid or a step refused it (``key``
            names the bad key, or the file path when the file is unreadable or not TOML);
            prepared steps are discarded and nothing changed.
    """

    def __init__(
        self,
        live: Live[Config],
        bus: EventBus,
        source: ConfigSource,
        steps: Sequence[RefreshStep] = (),
        *,
        storage: Storage | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._live = live
        self._storage = storage
        self._clock = clock
        self._bus = bus
        self._source = source
        self._steps = tuple(steps)
        self._lock = asyncio.Lock()

    async def __call__(self, actor_id: str | None = None) -> RefreshResult:
        """Re-read, compare, prepare, apply and report; see the class docstring. ``actor_id``:
        who asked (the caller of ``POST /actuator/refresh``), named as the ``actor_id`` of the
        ``config.changed`` audit row (docs/reference/operations.md)."""
        return await self._refresh(announce=True, actor_id=actor_id)

    async def follow(self, event: ConfigChanged) -> None:
        """Another instance refreshed (``event.origin`` set, from a broker bus): re-read this
        instance's own source and apply it all or nothing, exactly as ``__call__`` does, but
        publish nothing (the peer's event is already being delivered here). A refusal is
        logged (this instance keeps its configuration); nothing is raised."""
        try:
            result = await self._refresh(announce=False)
        except InvalidConfiguration as exc:
            log.error("refresh announced by instance %s refused here: %s", event.origin, exc)
            return
        log.info("followed the refresh of instance %s: changed %s", event.origin, result.changed)

    async def _refresh(self, *, announce: bool, actor_id: str | None = None) -> RefreshResult:
        async with self._lock:  # a local refresh and a peer's never interleave
            try:
                new = await asyncio.to_thread(self._source.load)
            except ConfigError as exc:
                raise _refused(exc) from None
            old = self._live.current
            changed = old.changed_prefixes(new)
            if not changed:
                return RefreshResult([], [])
            prepared = await self._prepare(old, new, changed)
            self._live.replace(new)
            for change in prepared:
                change.commit()
        restart = old.restart_required(new)
        log.info("configuration refreshed: changed %s, restart required for %s", changed, restart)
        if announce:
            event = ConfigChanged(changed=tuple(changed), actor_id=actor_id)
            if self._storage is not None and self._clock is not None:  # config.changed
                await record_apart(self._storage, self._bus, [event], self._clock.now())
            await self._bus.publish(event)
        return RefreshResult(changed=changed, restart_required=restart)

    async def _prepare(self, old: Config, new: Config, changed: list[str]) -> list[Prepared]:
        """Every step of a changed prefix, prepared in order; on a refusal (or any error) the
        ones already prepared are discarded, last first, and the error is raised."""
        prepared: list[Prepared] = []
        try:
            for step in self._steps:
                if step.prefix in changed:
                    prepared.append(await step.prepare(old, new))
        except BaseException as exc:
            for change in reversed(prepared):
                change.discard()
            if isinstance(exc, ConfigError):
                raise _refused(exc) from None
            raise
        return prepared


def _refused(exc: ConfigError) -> InvalidConfiguration:
    log.warning("configuration refresh refused: %s", exc)
    return InvalidConfiguration(exc.key, exc.message)


# --------------------------------------------------------------------------- the steps


class RefreshableTelemetry(Protocol):
    """What :class:`TelemetryStep` needs (``entrypoints.telemetry.Telemetry``)."""

    def provider_for(self, settings: TelemetrySettings) -> Any:
        """A provider for ``settings`` (None: the global one); raises ``ConfigError``."""
        ...

    def use(self, provider: Any) -> None:
        """Trace with ``provider`` from the next span on; never raises."""
        ...


@attrs.frozen
class TelemetryStep:
    """``telemetry``: build the new tracer provider now (``ConfigError`` naming
    ``telemetry.exporter`` for ``otlp`` without its package), use it at commit, shut it down if
    discarded."""

    telemetry: RefreshableTelemetry
    prefix: str = "telemetry"

    async def prepare(self, old: Config, new: Config) -> Prepared:
        """See the class docstring."""
        provider = self.telemetry.provider_for(new.telemetry)
        return Prepared(
            commit=lambda: self.telemetry.use(provider),
            discard=provider.shutdown if provider is not None else _nothing,
        )


class RefreshableSigner(Protocol):
    """What :class:`SignerStep` needs of a signer (``JwtSigner``)."""

    async def apply_async(self, settings: AuthSettings) -> None:
        """Sign new tokens per ``settings`` (may create a key); raises ``SignerUnavailable`` or
        ``KeyStoreError`` and changes nothing if it cannot."""
        ...


@attrs.frozen
class SignerStep:
    """``auth``: the signer switches to the new settings (algorithm, backend, key directory,
    lifetimes) during *prepare*, so that its refusal refuses the refresh.

    The switch cannot be undone, so this step must be the **last** one: once it has succeeded
    nothing else can refuse. Before touching the key directory it checks that an ML-DSA
    algorithm's backend loads here.

    Refusals, as ``ConfigError``: an ML-DSA backend that cannot work (``SignerUnavailable``)
    names ``auth.mldsa_backend``; an unusable key directory or key file (``KeyStoreError``)
    names ``auth.key_dir`` when that changed, else ``auth.algorithms`` (``auth.algorithm`` when
    no list is set); any other ``SignerUnavailable`` names the same. A change of
    ``auth.key_store`` or of the
    key-encryption key is refused, naming it: the key store is chosen at start.
    """

    signer: RefreshableSigner
    prefix: str = "auth"

    async def prepare(self, old: Config, new: Config) -> Prepared:
        """See the class docstring."""
        settings = new.auth
        for key in _RESTART_ONLY_AUTH_KEYS:
            if getattr(settings, key) != getattr(old.auth, key):
                raise ConfigError(
                    f"auth.{key}", "the key store cannot change while running: restart instead"
                )
        listed = "auth.algorithms" if settings.algorithms else "auth.algorithm"
        mldsa = any(a in MLDSA_ALGORITHMS for a in settings.signing_algorithms)
        try:
            if mldsa:
                await asyncio.to_thread(mldsa_backend, settings.mldsa_backend)
            await self.signer.apply_async(settings)
        except SignerUnavailable as exc:
            raise ConfigError("auth.mldsa_backend" if mldsa else listed, str(exc)) from None
        except KeyStoreError as exc:
            moved = settings.key_dir != old.auth.key_dir
            raise ConfigError("auth.key_dir" if moved else listed, str(exc)) from None
        return Prepared()


_RESTART_ONLY_AUTH_KEYS = ("key_store", "key_encryption_key", "key_encryption_key_file")
"""``auth`` keys a refresh refuses to change: the signer's key store is chosen at start."""


def refresh_steps(signer: RefreshableSigner, telemetry: RefreshableTelemetry) -> list[RefreshStep]:
    """The service's steps in their order: telemetry, then the signer (last; see
    :class:`SignerStep`)."""
    return [TelemetryStep(telemetry), SignerStep(signer)]
