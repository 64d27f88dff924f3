"""ActuatorSettings: defaults, validation naming the field, from_mapping."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from service_actuator import (
    ActuatorSettings,
    InvalidConfiguration,
    InvalidSetting,
    ServiceActuatorError,
)


def test_defaults_and_prefix() -> None:
    settings = ActuatorSettings()
    assert ActuatorSettings.prefix == "actuator"
    assert settings.show_details == "when_authorized"
    assert settings.show_components is None
    assert settings.effective_show_components == "when_authorized"
    assert settings.indicator_timeout == 2.0
    assert settings.metrics_require_auth is False
    assert dataclasses.is_dataclass(settings)
    assert "prefix" not in {f.name for f in dataclasses.fields(settings)}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"show_details": "sometimes"}, "show_details"),
        ({"show_details": None}, "show_details"),
        ({"show_components": "yes"}, "show_components"),
        ({"indicator_timeout": 0}, "indicator_timeout"),
        ({"indicator_timeout": -1.5}, "indicator_timeout"),
        ({"indicator_timeout": float("nan")}, "indicator_timeout"),
        ({"indicator_timeout": float("inf")}, "indicator_timeout"),
        ({"indicator_timeout": "2"}, "indicator_timeout"),
        ({"indicator_timeout": True}, "indicator_timeout"),
        ({"metrics_require_auth": "yes"}, "metrics_require_auth"),
        ({"metrics_require_auth": 1}, "metrics_require_auth"),
    ],
)
def test_bad_values_name_the_field(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidSetting) as caught:
        ActuatorSettings(**kwargs)
    assert caught.value.field == field
    assert caught.value.key == f"actuator.{field}"
    assert field in str(caught.value)
    assert isinstance(caught.value, InvalidConfiguration)
    assert isinstance(caught.value, ServiceActuatorError)


def test_int_timeout_becomes_float() -> None:
    settings = ActuatorSettings(indicator_timeout=3)
    assert settings.indicator_timeout == 3.0
    assert isinstance(settings.indicator_timeout, float)


def test_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ActuatorSettings().show_details = "always"  # type: ignore[misc]


def test_from_mapping() -> None:
    settings = ActuatorSettings.from_mapping({"show_details": "always", "indicator_timeout": 5})
    assert settings == ActuatorSettings(show_details="always", indicator_timeout=5.0)
    assert ActuatorSettings.from_mapping({}) == ActuatorSettings()


def test_from_mapping_rejects_unknown_key() -> None:
    with pytest.raises(InvalidConfiguration) as caught:
        ActuatorSettings.from_mapping({"show_detail": "always"})
    assert caught.value.key == "actuator.show_detail"
