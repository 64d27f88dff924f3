"""The config reloader behind POST /actuator/refresh (docs/reference/operations.md; ADR 0011: all
or nothing), without HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest

from adapters.crypto.key_records import KeyStoreError
from adapters.crypto.mldsa import SignerUnavailable
from adapters.crypto.signing_keys import mldsa_backend
from adapters.events.inprocess import InProcessEventBus
from application.events.catalog import ConfigChanged
from application.shared.settings import AuthSettings, Live
from entrypoints.config import Config, load_config
from entrypoints.config.refresh import ConfigReloader, ConfigSource, refresh_steps
from entrypoints.telemetry import Telemetry
from service_actuator import InvalidConfiguration, RefreshResult
from tests.fakes import Recorder


@attrs.define
class FakeSigner:
    """Records the settings it was asked to apply; raises ``refuse`` instead when set."""

    applied: list[AuthSettings] = attrs.field(factory=list)
    refuse: Exception | None = None

    async def apply_async(self, settings: AuthSettings) -> None:
        if self.refuse is not None:
            raise self.refuse
        self.applied.append(settings)


class RecordingTelemetry(Telemetry):
    """A real ``Telemetry`` that records the providers it was given to use."""

    def __init__(self) -> None:
        super().__init__()
        self.used: list[Any] = []

    def use(self, provider: Any) -> None:
        self.used.append(provider)
        super().use(provider)


@attrs.frozen
class Setup:
    path: Path
    live: Live[Config]
    recorder: Recorder
    reload: ConfigReloader
    signer: FakeSigner
    telemetry: RecordingTelemetry


@pytest.fixture
def world(tmp_path: Path) -> Setup:
    path = tmp_path / "authsvc.toml"
    path.write_text("[auth]\naccess_token_ttl = 600\n")
    source = ConfigSource(path, environ={})
    live = Live(source.load())
    bus = InProcessEventBus()
    signer, telemetry = FakeSigner(), RecordingTelemetry()
    reload = ConfigReloader(live, bus, source, refresh_steps(signer, telemetry))
    return Setup(path, live, Recorder(bus), reload, signer, telemetry)


@pytest.fixture
def setup(world: Setup) -> tuple[Path, Live[Config], Recorder, ConfigReloader]:
    return world.path, world.live, world.recorder, world.reload


async def test_nothing_changed_publishes_nothing(setup) -> None:
    _, live, recorder, reload = setup
    before = live.current
    assert await reload() == RefreshResult([], [])
    assert recorder.events == []
    assert live.current is before


async def test_a_change_is_put_in_force_with_one_event(setup) -> None:
    path, live, recorder, reload = setup
    path.write_text(
        '[auth]\naccess_token_ttl = 60\n[actuator]\nshow_details = "always"\n'
        "[server]\nport = 9999\n"
    )
    result = await reload()
    # the default issuer and mail links follow server.port
    assert result == RefreshResult(["actuator", "auth", "email", "server"], ["server"])
    assert recorder.events == [ConfigChanged(changed=("actuator", "auth", "email", "server"))]
    assert live.current.auth.access_token_ttl == 60
    assert live.current.actuator.show_details == "always"


async def test_environment_overrides_are_read_again(tmp_path: Path) -> None:
    environ = {"AUTHSVC_AUTH__LEEWAY": "5"}
    source = ConfigSource(None, environ)
    live = Live(load_config(None, environ))
    bus = InProcessEventBus()
    recorder = Recorder(bus)
    environ["AUTHSVC_AUTH__LEEWAY"] = "7"
    assert (await ConfigReloader(live, bus, source)()).changed == ["auth"]
    assert live.current.auth.leeway == 7
    assert len(recorder.of(ConfigChanged)) == 1


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[auth]\naccess_token_ttl = 0\n", "auth.access_token_ttl"),
        ("[storage]\nbackend = 'mongo'\n", "storage.backend"),
        ("[nope]\nx = 1\n", "nope"),
        ('[telemetry]\nexporter = "otlp"\n', "telemetry.exporter"),
    ],
)
async def test_invalid_configuration_changes_nothing(setup, text: str, key: str) -> None:
    path, live, recorder, reload = setup
    before = live.current
    path.write_text(text)
    with pytest.raises(InvalidConfiguration) as raised:
        await reload()
    assert raised.value.key == key
    assert live.current is before
    assert recorder.events == []


async def test_a_missing_file_is_invalid(setup) -> None:
    path, _, _, reload = setup
    path.unlink()
    with pytest.raises(InvalidConfiguration) as raised:
        await reload()
    assert raised.value.key == str(path)


async def test_the_signer_switches_before_the_configuration_is_swapped(world: Setup) -> None:
    world.path.write_text('[auth]\nalgorithm = "ML-DSA-65"\n')
    assert (await world.reload()).changed == ["auth"]
    assert [s.algorithm for s in world.signer.applied] == ["ML-DSA-65"]
    assert world.live.current.auth.algorithm == "ML-DSA-65"


@pytest.mark.parametrize(
    ("text", "refusal", "key"),
    [
        (
            '[auth]\nalgorithm = "ML-DSA-65"\n',
            SignerUnavailable("no backend"),
            "auth.mldsa_backend",
        ),
        ('[auth]\nalgorithm = "ML-DSA-65"\n', KeyStoreError("bad seed"), "auth.algorithm"),
        ('[auth]\nkey_dir = "/nowhere/keys"\n', KeyStoreError("cannot create"), "auth.key_dir"),
        ("[auth]\naccess_token_ttl = 60\n", SignerUnavailable("rsa gone"), "auth.algorithm"),
    ],
)
async def test_a_refusal_by_the_signer_applies_nothing(
    world: Setup, text: str, refusal: Exception, key: str
) -> None:
    """The signer refuses: 422 naming the key; the configuration in force, the telemetry (its
    prepared provider discarded) and the bus are as before."""
    before, tracer = world.live.current, world.telemetry.tracer
    world.signer.refuse = refusal
    world.path.write_text(text + '[telemetry]\nexporter = "console"\n')
    with pytest.raises(InvalidConfiguration) as raised:
        await world.reload()
    assert raised.value.key == key
    assert world.live.current is before
    assert world.telemetry.used == [] and world.telemetry.tracer is tracer
    assert world.recorder.events == []


async def test_an_unloadable_mldsa_backend_is_refused_before_the_signer_is_asked(
    world: Setup,
) -> None:
    """``liboqs`` is not installed here: refused by the backend check, the key directory
    untouched (the signer is never asked)."""
    world.path.write_text('[auth]\nalgorithm = "ML-DSA-65"\nmldsa_backend = "liboqs"\n')
    try:
        mldsa_backend("liboqs")
    except SignerUnavailable:
        pass
    else:  # pragma: no cover - depends on the machine
        pytest.skip("liboqs is installed here")
    with pytest.raises(InvalidConfiguration) as raised:
        await world.reload()
    assert raised.value.key == "auth.mldsa_backend"
    assert world.signer.applied == []
    assert world.live.current.auth.algorithm == "RS256"


async def test_a_telemetry_refusal_leaves_the_signer_alone(world: Setup) -> None:
    world.path.write_text('[auth]\nalgorithm = "ML-DSA-65"\n[telemetry]\nexporter = "otlp"\n')
    with pytest.raises(InvalidConfiguration) as raised:
        await world.reload()
    assert raised.value.key == "telemetry.exporter"
    assert world.signer.applied == []


async def test_a_telemetry_change_is_used_at_commit(world: Setup) -> None:
    world.path.write_text('[auth]\naccess_token_ttl = 600\n[telemetry]\nexporter = "console"\n')
    assert (await world.reload()).changed == ["telemetry"]
    assert len(world.telemetry.used) == 1 and world.telemetry.used[0] is not None
    assert world.signer.applied == []  # auth did not change
    world.telemetry.shutdown()


def test_a_view_follows_its_source_and_cannot_be_replaced() -> None:
    live = Live(Config())
    auth = live.view(lambda c: c.auth)
    assert auth.current is live.current.auth
    new = attrs.evolve(live.current, auth=AuthSettings(access_token_ttl=60))
    live.replace(new)
    assert auth.current.access_token_ttl == 60
    with pytest.raises(TypeError):
        auth.replace(AuthSettings())


# --------------------------------------------------------------------------- peers (issue 16)


async def test_a_peers_refresh_is_followed_here_without_a_new_event(world: Setup) -> None:
    """``ConfigChanged`` from another instance (``origin`` set): this instance re-reads its own
    source and applies it all or nothing, publishing nothing (no echo, no storm)."""
    world.path.write_text("[auth]\naccess_token_ttl = 60\n")
    await world.reload.follow(ConfigChanged(changed=("auth",), origin="peer-1"))
    assert world.live.current.auth.access_token_ttl == 60
    assert world.signer.applied[-1].access_token_ttl == 60
    assert world.recorder.events == []


async def test_a_peers_refresh_refused_here_changes_nothing(world: Setup) -> None:
    world.path.write_text("[auth]\naccess_token_ttl = -1\n")
    before = world.live.current
    await world.reload.follow(ConfigChanged(changed=("auth",), origin="peer-1"))  # logged
    assert world.live.current is before


async def test_the_key_store_cannot_change_by_refresh(world: Setup) -> None:
    before = world.live.current
    world.path.write_text('[auth]\nkey_store = "file"\naccess_token_ttl = 60\n')
    with pytest.raises(InvalidConfiguration) as err:
        await world.reload()
    assert err.value.key == "auth.key_store"
    assert world.live.current is before
