"""The device authorization grant, the user's side (RFC 8628 §3.3;
docs/reference/oauth-and-oidc.md): at ``/ui/device`` a signed-in user enters (or confirms) the
user code a device shows, sees which application asks for what, and approves or denies.

Every lookup of a user code counts first, like a login (``LoginThrottle``, keyed by the client
address alone: ``auth.login_max_failures`` wrong codes per ``auth.login_failure_window`` seconds,
shared by every instance through the login-attempts store); a code that is found gives its
attempt back. The HTTP edge also draws each request from the anonymous write bucket. A wrong code
is audited ``oauth.device_code_refused`` (never the code). The page always asks to confirm, even
for a client whose consent is stored or that skips consent (RFC 8628 §5.4: the user must see
which device they let in); an approval stores the consent like the consent page does.
"""

from __future__ import annotations

from datetime import datetime

import attrs

from application.events.audit import publish_failure, record
from application.events.oidc import (
    AuthorizationDenied,
    ConsentDecided,
    DeviceDecided,
    DeviceUserCodeRefused,
)
from application.oauth.settings import OidcSettings
from application.ports import Clock, EventBus, Storage
from application.sessions.hosted import move_idle_end, signed_in
from application.shared.settings import Live
from application.shared.steps import hash_token
from application.shared.throttle import LoginThrottle
from domain import policy
from domain.clients import Client
from domain.device import DeviceGrant, DeviceStatus, format_user_code, normalize_user_code
from domain.model import User
from domain.oidc import Consent, HostedSession

__all__ = [
    "DeviceNotAdmitted",
    "DeviceRequest",
    "DeviceVerification",
    "UserCodeRefused",
]

THROTTLE_KEY = "\x00device user code"
"""The throttle's "email" for user codes: no normalized email holds a NUL, so the key (with the
client address) is the address's own."""


class UserCodeRefused(Exception):
    """The user code is malformed, unknown, expired or already decided (one answer for all)."""


class DeviceNotAdmitted(Exception):
    """The client does not sign in users of the signed-in user's organization
    (``policy.client_admits_user``): the request was denied."""


@attrs.frozen
class DeviceRequest:
    """What the confirmation page shows: the ``user_code`` (``XXXX-XXXX``), the ``client``,
    the ``scopes`` asked for and the signed-in user's ``email``."""

    user_code: str
    client: Client
    scopes: tuple[str, ...]
    email: str


@attrs.frozen
class DeviceVerification:
    """``await find(user_code, cookie, address)`` → ``DeviceRequest``, or None when no one is
    signed in (show the login page first); ``await decide(user_code, cookie, address,
    approve)`` → True when the decision was stored (None: sign in first). Both raise
    ``UserCodeRefused``, ``DeviceNotAdmitted`` and ``RateLimited`` (too many wrong codes from
    this address, with ``retry_after``)."""

    _storage: Storage
    _bus: EventBus
    _clock: Clock
    _oidc: Live[OidcSettings]
    _throttle: LoginThrottle

    async def find(self, user_code: str, cookie: str | None, address: str) -> DeviceRequest | None:
        """The pending request of ``user_code`` for the user of the hosted session ``cookie``."""
        signed = await signed_in(self._storage, cookie, self._clock.now())
        if signed is None:
            return None
        _, user = signed
        grant, client = await self._lookup(user_code, user, address)
        return DeviceRequest(format_user_code(_normal(user_code)), client, grant.scopes, user.email)

    async def decide(
        self, user_code: str, cookie: str | None, address: str, approve: bool
    ) -> bool | None:
        """Store the signed-in user's decision on ``user_code``'s request: approved (with the
        hosted login's ``sid``, ``auth_time``, ``amr``, ``acr``; the consent to its scopes
        stored, ``oauth.consent_granted``) or denied; audited ``oauth.device_approved`` /
        ``oauth.device_denied``. False when another decision came first."""
        now = self._clock.now()
        signed = await signed_in(self._storage, cookie, now)
        if signed is None:
            return None
        hosted, user = signed
        grant, client = await self._lookup(user_code, user, address)
        return await self._store(grant, client, hosted, approve, now)

    async def _lookup(self, user_code: str, user: User, address: str) -> tuple[DeviceGrant, Client]:
        attempt = await self._throttle.attempt(THROTTLE_KEY, address)
        normal = normalize_user_code(user_code)
        now = self._clock.now()
        grant = client = None
        if normal is not None:
            async with self._storage.read() as uow:
                grant = await uow.device_grants.find_by_user_code(hash_token(normal), now)
                client = None if grant is None else await uow.clients.get(grant.client_id)
        if grant is None or client is None or client.disabled:
            await publish_failure(self._storage, self._bus, now, DeviceUserCodeRefused(user.id))
            raise UserCodeRefused
        await self._throttle.release(attempt)
        if not policy.client_admits_user(client, user):
            denied = AuthorizationDenied(user.id, client.id, "organization")
            async with self._storage.begin() as uow:
                await uow.device_grants.decide(
                    attrs.evolve(grant, status=DeviceStatus.DENIED, user_id=user.id,
                                 decided_at=now), now,
                )  # fmt: skip
                await record(uow, [denied], now)
                await uow.commit()
            await self._bus.publish(denied)
            raise DeviceNotAdmitted
        return grant, client

    async def _store(
        self, grant: DeviceGrant, client: Client, hosted: HostedSession, approve: bool,
        now: datetime,
    ) -> bool:  # fmt: skip
        scope = " ".join(grant.scopes)
        decided = attrs.evolve(
            grant, status=DeviceStatus.APPROVED if approve else DeviceStatus.DENIED,
            user_id=hosted.user_id, session_id=hosted.session_id, auth_time=hosted.auth_time,
            amr=hosted.amr, acr=hosted.acr, decided_at=now,
        )  # fmt: skip
        events: list[ConsentDecided | DeviceDecided] = [
            ConsentDecided(hosted.user_id, client.id, scope, approve),
            DeviceDecided(hosted.user_id, client.id, scope, approve, hosted.session_id),
        ]
        async with self._storage.begin() as uow:
            if not await uow.device_grants.decide(decided, now):
                return False
            if approve:
                await uow.consents.grant(Consent(hosted.user_id, client.id, grant.scopes, now))
            await move_idle_end(uow, hosted, now, self._oidc.current.session_idle_ttl)
            await record(uow, events, now)
            await uow.commit()
        for event in events:
            await self._bus.publish(event)
        return True


def _normal(user_code: str) -> str:
    normal = normalize_user_code(user_code)
    if normal is None:  # _lookup refused it already
        raise UserCodeRefused
    return normal
