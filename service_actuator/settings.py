"""The actuator's settings: configuration prefix ``actuator`` (``[actuator]`` in TOML).

The knobs follow Spring Boot Actuator's ``management.endpoint.health.show-details`` and
``show-components``; bad values raise :class:`~service_actuator.errors.InvalidSetting` naming the
key, so a service's configuration loader can report them like its own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Literal, TypeAlias

from service_actuator.errors import InvalidConfiguration, InvalidSetting

__all__ = ["ActuatorSettings", "ShowMode"]

ShowMode: TypeAlias = Literal["never", "when_authorized", "always"]
"""Who sees a part of the health document: nobody, authorized callers, or everybody."""

_SHOW_MODES: tuple[str, ...] = ("never", "when_authorized", "always")


@dataclass(frozen=True, slots=True)
class ActuatorSettings:
    """Settings of the actuator; configuration prefix ``actuator`` (``[actuator]`` in TOML).

    Attributes:
        show_details: who sees each component's ``details`` in health responses: ``"never"``,
            ``"when_authorized"`` (the :data:`Authorizer` allows action ``"health_details"``;
            the default) or ``"always"`` (Spring's ``management.endpoint.health.show-details``).
        show_components: who sees the ``components`` map at all; None (the default) means the
            same as ``show_details``, as in Spring. With ``never`` the body is ``{"status"}``.
        indicator_timeout: seconds one health check may take before it counts as DOWN (> 0).
        metrics_require_auth: whether ``/metrics`` asks the :data:`Authorizer` (action
            ``"metrics"``) first.

    Raises:
        InvalidSetting: (an ``InvalidConfiguration``) a field has a bad value; ``field`` and
            ``key`` (``"actuator.<field>"``) name it.
    """

    prefix: ClassVar[str] = "actuator"

    show_details: ShowMode = "when_authorized"
    show_components: ShowMode | None = None
    indicator_timeout: float = 2.0
    metrics_require_auth: bool = False

    def __post_init__(self) -> None:
        if self.show_details not in _SHOW_MODES:
            raise InvalidSetting(
                "show_details",
                f"must be one of {', '.join(_SHOW_MODES)}, not {self.show_details!r}",
            )
        if self.show_components is not None and self.show_components not in _SHOW_MODES:
            raise InvalidSetting(
                "show_components",
                f"must be one of {', '.join(_SHOW_MODES)} or None, not {self.show_components!r}",
            )
        timeout = self.indicator_timeout
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not math.isfinite(timeout)
            or timeout <= 0
        ):
            raise InvalidSetting(
                "indicator_timeout", f"must be a positive number of seconds, not {timeout!r}"
            )
        object.__setattr__(self, "indicator_timeout", float(timeout))
        if not isinstance(self.metrics_require_auth, bool):
            raise InvalidSetting(
                "metrics_require_auth", f"must be true or false, not {self.metrics_require_auth!r}"
            )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> ActuatorSettings:
        """Settings from a configuration table (e.g. TOML ``[actuator]``); missing keys default.

        Raises:
            InvalidConfiguration: an unknown key (``key`` = ``"actuator.<name>"``).
            InvalidSetting: a bad value.
        """
        known = {f.name for f in fields(cls)}
        for key in data:
            if key not in known:
                raise InvalidConfiguration(f"{cls.prefix}.{key}", "unknown key")
        return cls(**data)

    @property
    def effective_show_components(self) -> ShowMode:
        """``show_components``, or ``show_details`` when it is None."""
        return self.show_components if self.show_components is not None else self.show_details

    @property
    def details_depend_on_caller(self) -> bool:
        """Whether health responses differ by caller: a show mode is ``when_authorized``."""
        return "when_authorized" in {self.show_details, self.effective_show_components}

    def visibility(self, authorized: bool) -> tuple[bool, bool]:
        """``(components, details)``: whether a health response shows each to a caller.

        ``authorized`` is the authorizer's verdict for action ``"health_details"``; details are
        shown only together with components.
        """

        def shown(mode: ShowMode) -> bool:
            return mode == "always" or (mode == "when_authorized" and authorized)

        components = shown(self.effective_show_components)
        return components, components and shown(self.show_details)
