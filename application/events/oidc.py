"""Events of the OpenID Connect provider (docs/reference/oauth-and-oidc.md). Ids and scope names
only: never a code, token or hint."""

from __future__ import annotations

import attrs

from application.events.catalog import Event

__all__ = [
    "AuthorizationDenied",
    "Authorized",
    "BackchannelLogoutFailed",
    "BackchannelLogoutSent",
    "CodeReused",
    "ConsentDecided",
    "ConsentRevoked",
    "DeviceDecided",
    "DeviceUserCodeRefused",
    "OidcLogout",
]


@attrs.frozen
class Authorized(Event):
    """An authorization code was issued to ``client_id`` for ``user_id`` and ``scope``
    (space-separated), from the hosted session ``session_id``."""

    user_id: str
    client_id: str
    scope: str
    session_id: str


@attrs.frozen
class AuthorizationDenied(Event):
    """``client_id`` may not sign ``user_id`` in; its request was answered ``access_denied``
    (RFC 6749 §4.1.2.1). ``reason``: ``"organization"`` (the user is of another organization
    and the client lacks ``all_organizations``)."""

    user_id: str
    client_id: str
    reason: str


@attrs.frozen
class ConsentDecided(Event):
    """``user_id`` allowed (``granted``) or refused ``client_id`` the ``scope``."""

    user_id: str
    client_id: str
    scope: str
    granted: bool


@attrs.frozen
class CodeReused(Event):
    """An authorization code of ``client_id`` came back; the token family ``family_id`` issued
    from its first use (None: none yet) was revoked (RFC 9700 §4.2.4)."""

    user_id: str
    client_id: str
    family_id: str | None


@attrs.frozen
class OidcLogout(Event):
    """The hosted session (its ``session_id``) of ``user_id`` ended by RP-initiated logout
    (``client_id``: the hint's client, None without a valid hint)."""

    user_id: str
    session_id: str
    client_id: str | None


@attrs.frozen
class ConsentRevoked(Event):
    """``user_id`` revoked its consent to the client ``client_id`` (DELETE
    /me/consents/{client_id}); ``sessions_ended`` of the user's sessions that client started
    ended with it (each also has its ``SessionEnded``, reason ``user``)."""

    user_id: str
    client_id: str
    sessions_ended: int


@attrs.frozen
class DeviceDecided(Event):
    """``user_id`` approved (``approved``) or denied the device authorization request of
    ``client_id`` for ``scope`` at ``/ui/device`` (RFC 8628 §3.3), signed in by the hosted
    session ``session_id``."""

    user_id: str
    client_id: str
    scope: str
    approved: bool
    session_id: str


@attrs.frozen
class DeviceUserCodeRefused(Event):
    """A user code entered at ``/ui/device`` was wrong, expired or already decided (``user_id``:
    who was signed in). Never the code itself."""

    user_id: str


@attrs.frozen
class BackchannelLogoutSent(Event):
    """A logout token for the session ``sid`` of ``user_id`` reached ``client_id``'s
    ``backchannel_logout_uri`` (OpenID Connect Back-Channel Logout 1.0 §2.8: it answered 2xx)
    after ``attempts`` tries."""

    user_id: str
    client_id: str
    sid: str
    attempts: int


@attrs.frozen
class BackchannelLogoutFailed(Event):
    """A logout token for the session ``sid`` of ``user_id`` was given up: ``reason`` is
    ``retry_window`` (``client_id`` never answered 2xx within ``oidc.backchannel_retry_window``)
    or ``client_gone`` (the client, or its ``backchannel_logout_uri``, went meanwhile)."""

    user_id: str
    client_id: str
    sid: str
    reason: str
