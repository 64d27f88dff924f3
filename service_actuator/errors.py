"""Exceptions of ``service_actuator``. Every one derives from :class:`ServiceActuatorError`.

How they reach HTTP (RFC 9457 problem details, see ``service_actuator.aiohttp``):

============================  ======  ==========================
exception                     status  problem ``code``
============================  ======  ==========================
``InvalidConfiguration``      422     ``invalid_configuration``
``AuthenticationRequired``    401     ``invalid_token``
``AccessDenied``              403     ``forbidden``
============================  ======  ==========================
"""

from __future__ import annotations

__all__ = [
    "AccessDenied",
    "AuthenticationRequired",
    "DuplicateIndicator",
    "InvalidConfiguration",
    "InvalidSetting",
    "MetricsUnavailable",
    "ServiceActuatorError",
]


class ServiceActuatorError(Exception):
    """Base class of every exception raised by ``service_actuator``."""


class InvalidConfiguration(ServiceActuatorError):
    """A configuration value is invalid; nothing was changed.

    Raised by a service's reloader (see ``Actuator.refresh``) when the re-read configuration
    does not validate; the refresh endpoint answers 422 ``invalid_configuration`` naming
    :attr:`key`.

    Attributes:
        key: the dotted configuration key, e.g. ``"auth.access_token_ttl"``.
        message: why the value is invalid (no secret values, please).
    """

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
        self.message = message


class InvalidSetting(InvalidConfiguration):
    """A field of :class:`~service_actuator.ActuatorSettings` has a bad value.

    Attributes:
        field: the dataclass field, e.g. ``"show_details"``.
        key: the configuration key, ``"actuator." + field``.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"actuator.{field}", message)
        self.field = field


class DuplicateIndicator(ServiceActuatorError, ValueError):
    """A health indicator with the same ``name`` is already registered."""


class MetricsUnavailable(ServiceActuatorError):
    """prometheus-client (the ``metrics`` extra) is not installed; ``/metrics`` answers 501."""


class AuthenticationRequired(ServiceActuatorError):
    """An authorizer may raise this: no or invalid credentials (401 ``invalid_token``)."""


class AccessDenied(ServiceActuatorError):
    """An authorizer may raise this: authenticated but not allowed (403 ``forbidden``)."""
