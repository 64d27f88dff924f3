"""The config reloader behind POST /actuator/refresh (contract sections 4 and 6), without HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.events.inprocess import InProcessEventBus
from application.events import ConfigChanged
from application.settings import Live
from entrypoints.config import Config, load_config
from entrypoints.reload import ConfigReloader, ConfigSource, check_servable
from service_actuator import InvalidConfiguration, RefreshResult
from tests.unit.conftest import Recorder


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Live[Config], Recorder, ConfigReloader]:
    path = tmp_path / "authsvc.toml"
    path.write_text("[auth]\naccess_token_ttl = 600\n")
    source = ConfigSource(path, environ={})
    live = Live(source.load())
    bus = InProcessEventBus()
    return path, live, Recorder(bus), ConfigReloader(live, bus, source, check_servable)


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
    assert result == RefreshResult(["actuator", "auth", "server"], ["server"])
    assert recorder.events == [ConfigChanged(changed=("actuator", "auth", "server"))]
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
