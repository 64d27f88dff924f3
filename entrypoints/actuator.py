"""What ``service_actuator`` leaves to authsvc (docs/reference/operations.md): who may do what at
the actuator (``actuator_authorizer``, which asks ``domain.policy``) and what ``/actuator/info``
adds (``ServiceInfo``). The routes themselves are the library's; their ``/openapi.json``
entries are ``entrypoints.http.actuator_routes``.

It stands outside ``entrypoints/http/`` and imports no route module: the container builds the
actuator (``entrypoints.wiring``), so nothing the container imports may lead back to it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any, Protocol

from domain import policy
from domain.errors import InvalidToken
from domain.model import Role, User
from domain.policy import ActuatorOperation, Principal
from entrypoints.http.bearer import WithHeaders, bearer_token
from service_actuator import Access, Action, Authorizer

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
"""The user id of the caller the authorizer allowed to refresh in this request (None
otherwise): the library calls the reloader without the request, so the reloader reads the
caller here, to name it in the ``config.changed`` audit row (docs/reference/operations.md). Every
``refresh`` the policy rules on sets it (None when refused), and a reload runs only after an
allowed one in the same request, so nothing of an earlier request is read."""


class _WithUser(Protocol):
    @property
    def user(self) -> User: ...


class TokenAuthority(Protocol):
    """What the authorizer asks of the authentication use cases (``AuthService``)."""

    async def authenticate(self, token: str) -> _WithUser:
        """The token's user loaded afresh; raises ``InvalidToken``, storage errors pass."""
        ...

    async def verify_token(self, token: str) -> dict[str, Any]:
        """The verified token's claims, without storage; raises ``InvalidToken``."""
        ...


async def claimed_principal(auth: TokenAuthority, request: WithHeaders) -> Principal | None:
    """The caller as its verified bearer token's claims describe it (``sub``, ``role``,
    ``org_id``), without touching storage: the role may be up to ``auth.access_token_ttl``
    seconds old. Only for decisions that must work while the storage is failing (health
    details). None when the ``role`` claim names no role; raises ``InvalidToken`` for a missing
    or bad token."""
    claims = await auth.verify_token(bearer_token(request))
    try:
        role = Role(str(claims.get("role")))
    except ValueError:
        return None
    return Principal(user_id=str(claims["sub"]), role=role, org_id=str(claims.get("org_id", "")))


def actuator_authorizer(auth: Callable[[], TokenAuthority]) -> Authorizer:
    """The actuator's authorizer: ``(request, action)`` → ``"ok" | "unauthenticated" |
    "forbidden"``, from the request's ``Authorization: Bearer`` access token, verified by
    ``auth()`` (asked per request: the container's provider, since the signer behind it is made
    only once the storage is open).

    Whether the caller may is ``domain.policy.can(caller, OPERATIONS[action])``
    (``ACTUATOR_REQUIRED_ROLE``: health details for org_admin and superadmin, refresh for
    superadmin, metrics — asked only when ``actuator.metrics_require_auth`` — for any
    authenticated user).

    An allowed ``refresh`` leaves the caller's user id in ``REFRESH_CALLER`` for the reloader.
    A missing, malformed, expired or otherwise invalid token (or one whose user is gone) is
    ``unauthenticated``. The user is loaded afresh, so a demoted admin loses access at once —
    except for ``health_details`` while the storage is failing: then the verified token's claims
    decide (``claimed_principal``; an unknown ``role`` claim is ``forbidden``), so operators can
    still read why the service is DOWN (health details hold no user data). For the other
    actions a storage error propagates (500).
    """

    async def authorize_actuator(request: WithHeaders, action: Action) -> Access:
        operation = OPERATIONS[action]
        caller: Principal | None
        try:
            caller = Principal.of((await auth().authenticate(bearer_token(request))).user)
        except InvalidToken:
            return Access.UNAUTHENTICATED
        except Exception:
            if operation is not ActuatorOperation.SEE_HEALTH_DETAILS:
                raise
            log.warning("storage unavailable; health details authorized by the token's claims")
            try:
                caller = await claimed_principal(auth(), request)
            except InvalidToken:
                return Access.UNAUTHENTICATED
        allowed = caller is not None and policy.can(caller, operation)
        if operation is ActuatorOperation.REFRESH_CONFIGURATION:
            REFRESH_CALLER.set(caller.user_id if allowed and caller is not None else None)
        return Access.OK if allowed else Access.FORBIDDEN

    return authorize_actuator


class _Key(Protocol):
    @property
    def alg(self) -> str: ...
    @property
    def kid(self) -> str: ...


class SignerFacts(Protocol):
    """What ``/actuator/info`` reads of the signer: public facts only."""

    @property
    def algorithm(self) -> str:
        """The JWS ``alg`` of new tokens."""
        ...

    def signing_kids(self) -> Mapping[str, str]:
        """``{alg: kid}`` of the key signing each algorithm now."""
        ...

    def verification_keys(self) -> Iterable[_Key]:
        """The keys that may still verify a live token."""
        ...


class _AuthFacts(Protocol):
    @property
    def issuer(self) -> str: ...


class _TelemetryFacts(Protocol):
    @property
    def exporter(self) -> str: ...


class _StorageFacts(Protocol):
    @property
    def backend(self) -> str: ...


class ConfigFacts(Protocol):
    """The parts of a configuration ``ServiceInfo`` reads (``entrypoints.config.Config``)."""

    @property
    def auth(self) -> _AuthFacts: ...
    @property
    def storage(self) -> _StorageFacts: ...
    @property
    def telemetry(self) -> _TelemetryFacts: ...


class LiveFacts(Protocol):
    """The configuration in force (``Live[Config]``)."""

    @property
    def current(self) -> ConfigFacts: ...


class ServiceInfo:
    """``/actuator/info`` contributor: ``{"auth": {"algorithm", "algorithms", "issuer"},
    "storage": {"backend"}, "telemetry": {"exporter"}}`` — ``algorithms`` lists, per JWS ``alg``
    signed with or still verified (docs/reference/tokens-and-sessions.md), ``{"alg", "signing":
    bool, "signing_kid": kid | null, "kids": [every kid of it in the JWKS]}``. Public facts only,
    never a secret (no DSN, no key material, no key paths). ``auth`` comes from the settings in
    force (after a refresh), ``storage`` from the start configuration (it needs a restart to
    change)."""

    def __init__(self, live_config: LiveFacts, start_config: ConfigFacts, signer: SignerFacts):
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
