"""Pushed authorization requests (RFC 9126; docs/reference/oauth-and-oidc.md): ``/oauth/par``
checks an authorization request's parameters as ``/oauth/authorize`` does and stores them behind
a ``request_uri`` (hashed, single use, ``REQUEST_URI_TTL`` seconds, bound to the client);
``/oauth/authorize?client_id=…&request_uri=…`` then runs on the stored parameters.

The browser may need a login (and a consent page) before the request is answered, and the
interaction state travels in the URL (ADR 0032): the resolved request carries
``authsvc_pushed=<unix s>.<MAC>``, a MAC (``SecretSealer.mac``) over the client and the pushed
parameters, valid for ``oidc.interaction_ttl`` seconds. A client with
``require_pushed_authorization_requests`` is served only a request that came through a
``request_uri`` or carries a valid marker: parameters typed into the URL by anyone else are
``invalid_request``.
"""

from __future__ import annotations

import base64
import hmac
import secrets
from datetime import datetime, timedelta
from urllib.parse import urlencode

import attrs

from application.oauth.authorize import (
    AuthorizePageError,
    AuthorizeRedirectError,
    parse_authorize,
)
from application.oauth.grants import OAuthError
from application.oauth.settings import OidcSettings
from application.ports import Clock, SecretSealer, Storage
from application.shared.settings import Live
from application.shared.steps import hash_token
from domain.clients import Client
from domain.pushed import REQUEST_URI_PREFIX, REQUEST_URI_TTL, PushedRequest

__all__ = ["PUSHED_MARKER", "PushedAuthorization", "resolve_pushed"]

PUSHED_MARKER = "authsvc_pushed"
"""The parameter a resolved pushed request carries (see the module)."""
URI_BYTES = 32
"""Entropy of a ``request_uri``'s random part: 256 bits."""
_UNSIGNED = frozenset({PUSHED_MARKER, "authsvc_login_after", "prompt", "login_hint"})
"""Left out of the marker's MAC: the parameters the provider itself adds or changes on the way
(a forced login's marker; "not you?" asks ``prompt=login`` without the hint)."""
_CLIENT_AUTH = frozenset({"client_secret", "client_assertion", "client_assertion_type"})
_MAX_URI = 256


def _marker(sealer: SecretSealer, client_id: str, params: list[tuple[str, str]], at: int) -> str:
    signed = sorted((k, v) for k, v in params if k not in _UNSIGNED)
    digest = hash_token(urlencode(signed))
    mac = sealer.mac(f"authsvc pushed {at} {client_id} {digest}".encode())
    return f"{at}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode('ascii')}"


def _marked(sealer: SecretSealer, pairs: list[tuple[str, str]], now: datetime, ttl: int) -> bool:
    """Whether ``pairs`` carry a valid, fresh marker for their ``client_id``."""
    values = dict(pairs)
    marker, client_id = values.get(PUSHED_MARKER, ""), values.get("client_id", "")
    at, _, _ = marker.partition(".")
    if not (at.isascii() and at.isdigit() and len(at) < 12):
        return False
    fresh = 0 <= now.timestamp() - int(at) <= ttl
    expected = _marker(sealer, client_id, pairs, int(at))
    return fresh and hmac.compare_digest(marker, expected)


async def resolve_pushed(
    storage: Storage, sealer: SecretSealer, now: datetime, ttl: int, pairs: list[tuple[str, str]]
) -> tuple[list[tuple[str, str]], bool]:
    """The parameters an authorization request stands for, and whether they were pushed.

    With ``request_uri``: it must be one ``client_id`` pushed, unexpired and unused (taken
    now, once), else ``AuthorizePageError`` (no redirect URI can be trusted yet); the stored
    parameters are returned with a fresh marker. Without: ``pairs`` as given, pushed when they
    carry a valid marker (``ttl``: ``oidc.interaction_ttl`` seconds)."""
    uris = [v for k, v in pairs if k == "request_uri"]
    if not uris:
        return pairs, _marked(sealer, pairs, now, ttl)
    client_ids = [v for k, v in pairs if k == "client_id"]
    if len(uris) > 1 or len(client_ids) != 1:
        raise AuthorizePageError("request_uri and client_id must be given once each")
    uri = uris[0]
    found = None
    if uri.startswith(REQUEST_URI_PREFIX) and len(uri) <= _MAX_URI:
        async with storage.begin() as uow:
            found = await uow.pushed_requests.take(hash_token(uri), now)
            if found is not None and found.client_id == client_ids[0]:
                await uow.commit()  # another client's try leaves it in place
            else:
                found = None
    if found is None:
        raise AuthorizePageError("request_uri is unknown, used, expired or another client's")
    params = [(k, v) for k, v in found.params if k != PUSHED_MARKER]
    at = int(now.timestamp())
    return [*params, (PUSHED_MARKER, _marker(sealer, found.client_id, params, at))], True


@attrs.frozen
class PushedAuthorization:
    """``await par.push(client, pairs)`` → ``(request_uri, expires_in)`` (RFC 9126 §2.2).
    Raises ``OAuthError``: ``invalid_request`` (a ``request`` or ``request_uri`` parameter, a
    ``client_id`` other than the authenticated client's, anything ``/oauth/authorize`` would
    refuse with an error page) and the errors ``/oauth/authorize`` would send to the redirect
    URI (``invalid_scope``, ``unauthorized_client``, ``unsupported_response_type``...)."""

    _storage: Storage
    _clock: Clock
    _oidc: Live[OidcSettings]

    async def push(self, client: Client, pairs: list[tuple[str, str]]) -> tuple[str, int]:
        """Check and store the authorization request ``pairs`` (the form of ``/oauth/par``,
        its client authentication left out) of the authenticated ``client``."""
        names = {k for k, _ in pairs}
        if names & {"request", "request_uri", PUSHED_MARKER}:
            raise OAuthError("invalid_request", "request, request_uri are not accepted here")
        given = [v for k, v in pairs if k == "client_id"]
        if given and given != [client.id]:
            raise OAuthError("invalid_request", "client_id is not the authenticated client")
        params = [(k, v) for k, v in pairs if k not in _CLIENT_AUTH and k != "client_id"]
        params.insert(0, ("client_id", client.id))
        try:
            parse_authorize(params, client)
        except AuthorizePageError as e:
            raise OAuthError("invalid_request", e.description) from None
        except AuthorizeRedirectError as e:
            raise OAuthError(e.error, e.description) from None
        now = self._clock.now()
        uri = REQUEST_URI_PREFIX + secrets.token_urlsafe(URI_BYTES)
        pushed = PushedRequest(
            hash_token(uri), client.id, tuple(params), now,
            now + timedelta(seconds=REQUEST_URI_TTL),
        )  # fmt: skip
        async with self._storage.begin() as uow:
            await uow.pushed_requests.add(pushed)
            await uow.commit()
        return uri, REQUEST_URI_TTL
