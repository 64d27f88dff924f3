"""The actuator endpoints of authsvc (docs/reference/operations.md): wiring of ``service_actuator``.

``service_actuator`` serves the six routes; this module supplies what the library leaves to the
service — who may do what (:func:`authorize_actuator`, which asks ``domain.policy``), what
``/actuator/info`` adds (:class:`ServiceInfo`) — and the ``RouteSpec`` entries that describe the
routes in ``/openapi.json`` (:func:`route_specs`; documentation only, the library registers the
routes).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any

from aiohttp import web

from domain import policy
from domain.errors import InvalidToken
from domain.policy import ActuatorOperation, Principal
from entrypoints.http.caller import claimed_principal, principal
from entrypoints.http.routing import RouteSpec
from service_actuator import Access, Action

log = logging.getLogger("authsvc.actuator")

OPERATIONS: Mapping[Action, ActuatorOperation] = MappingProxyType(
    {
        "health_details": ActuatorOperation.SEE_HEALTH_DETAILS,
        "metrics": ActuatorOperation.READ_METRICS,
        "refresh": ActuatorOperation.REFRESH_CONFIGURATION,
    }
)
"""The library's actions as the policy's operations."""

REFRESH_CALLER: ContextVar[str | None] = ContextVar("authsvc_refresh_caller", default=None)
"""The user id of the caller ``authorize_actuator`` allowed to refresh in this request (None
otherwise): the library calls the reloader without the request, so the reloader reads the
caller here, to name it in the ``config.changed`` audit row (docs/reference/operations.md). Every
``refresh`` the policy rules on sets it (None when refused), and a reload runs only after an
allowed one in the same request, so nothing of an earlier request is read."""


async def authorize_actuator(request: web.Request, action: Action) -> Access:
    """The actuator's authorizer: ``(request, action)`` → ``"ok" | "unauthenticated" |
    "forbidden"``, from the request's ``Authorization: Bearer`` access token.

    The caller comes from ``entrypoints.http.caller``; whether it may is
    ``domain.policy.can(caller, OPERATIONS[action])`` (``ACTUATOR_REQUIRED_ROLE``: health
    details for org_admin and superadmin, refresh for superadmin, metrics — asked only when
    ``actuator.metrics_require_auth`` — for any authenticated user).

    An allowed ``refresh`` leaves the caller's user id in ``REFRESH_CALLER`` for the reloader.
    A missing, malformed, expired or otherwise invalid token (or one whose user is gone) is
    ``unauthenticated``. The user is loaded afresh, so a demoted admin loses access at once —
    except for ``health_details`` while the storage is failing: then the verified token's claims
    decide (``claimed_principal``; an unknown ``role`` claim is ``forbidden``), so operators can
    still read why the service is DOWN (health details hold no user data). For the other
    actions a storage error propagates (500).
    """
    operation = OPERATIONS[action]
    caller: Principal | None
    try:
        caller = await principal(request)
    except InvalidToken:
        return Access.UNAUTHENTICATED
    except Exception:
        if operation is not ActuatorOperation.SEE_HEALTH_DETAILS:
            raise
        log.warning("storage unavailable; health details authorized by the token's claims")
        try:
            caller = await claimed_principal(request)
        except InvalidToken:
            return Access.UNAUTHENTICATED
    allowed = caller is not None and policy.can(caller, operation)
    if operation is ActuatorOperation.REFRESH_CONFIGURATION:
        REFRESH_CALLER.set(caller.user_id if allowed and caller is not None else None)
    return Access.OK if allowed else Access.FORBIDDEN


class ServiceInfo:
    """``/actuator/info`` contributor: ``{"auth": {"algorithm", "algorithms", "issuer"},
    "storage": {"backend"}, "telemetry": {"exporter"}}`` — ``algorithms`` lists, per JWS ``alg``
    signed with or still verified (docs/reference/tokens-and-sessions.md), ``{"alg", "signing":
    bool, "signing_kid": kid | null, "kids": [every kid of it in the JWKS]}``. Public facts only,
    never a secret (no DSN, no key material, no key paths). ``auth`` comes from the settings in
    force (after a refresh), ``storage`` from the start configuration (it needs a restart to
    change)."""

    def __init__(self, live_config: Any, start_config: Any, signer: Any) -> None:
        self._live = live_config
        self._start = start_config
        self._signer = signer

    def contribute(self) -> dict[str, Any]:
        """The contribution, read now."""
        live = self._live.current
        return {
            "auth": {
                "algorithm": self._signer.algorithm,
                "algorithms": self._algorithms(),
                "issuer": live.auth.issuer,
            },
            "storage": {"backend": self._start.storage.backend},
            "telemetry": {"exporter": live.telemetry.exporter},
        }

    def _algorithms(self) -> list[dict[str, Any]]:
        signing = self._signer.signing_kids()
        kids: dict[str, list[str]] = {alg: [] for alg in signing}
        for key in self._signer.verification_keys():
            kids.setdefault(key.alg, []).append(key.kid)
        return [
            {"alg": alg, "signing": alg in signing, "signing_kid": signing.get(alg), "kids": found}
            for alg, found in kids.items()
        ]


# (route name given by setup_actuator, method, summary, responses, bearer)
_DOCS: tuple[tuple[str, str, str, dict[int, str], bool], ...] = (
    ("actuator.health", "GET",
     "Health over every indicator (db, signingKey); details per actuator.show_details",
     {200: "Health", 503: "Health"}, False),
    ("actuator.liveness", "GET", "Liveness: always UP, checks no dependency",
     {200: "Health"}, False),
    ("actuator.readiness", "GET", "Readiness over the readiness indicators (db, signingKey)",
     {200: "Health", 503: "Health"}, False),
    ("actuator.info", "GET", "Application name and version, git, python, auth and storage facts",
     {200: "Info"}, False),
    ("actuator.metrics", "GET",
     "Prometheus text 0.0.4, or OpenMetrics 1.0.0 with Accept: application/openmetrics-text",
     {200: "Prometheus text 0.0.4 or OpenMetrics 1.0.0", 401: "Problem", 403: "Problem",
      406: "Problem", 501: "Problem"}, False),
    ("actuator.refresh", "POST",
     "Re-read the configuration file and environment (superadmin)",
     {200: "RefreshResult", 401: "Problem", 403: "Problem", 422: "Problem", 501: "Problem"},
     True),
)  # fmt: skip


def route_specs(app: web.Application) -> list[RouteSpec]:
    """``RouteSpec``s describing the actuator routes ``setup_actuator`` registered on ``app``
    (path and handler read back from the router, so the document follows the library).

    Raises ``KeyError`` if ``setup_actuator`` has not run on ``app``.
    """
    specs: list[RouteSpec] = []
    for name, method, summary, responses, bearer in _DOCS:
        resource = app.router[name]
        route = next(r for r in resource if r.method == method)
        specs.append(
            RouteSpec(
                method,
                resource.canonical,
                route.handler,
                summary,
                responses,
                bearer=bearer,
                tag="actuator",
            )
        )
    return specs
