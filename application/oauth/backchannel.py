"""Back-channel logout delivery (OpenID Connect Back-Channel Logout 1.0 §2.4–2.8;
docs/reference/oauth-and-oidc.md): the logout token of one ``backchannel_logout`` outbox item,
built and signed at delivery, POSTed to the client's ``backchannel_logout_uri``.

The items are queued by ``application.shared.backchannel`` in the unit of work that ends the
session; ``application.shared.outbox.DeliverOutbox`` claims them and calls
``BackchannelLogoutDelivery``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

import attrs

from application.events.catalog import Event
from application.events.oidc import BackchannelLogoutFailed, BackchannelLogoutSent
from application.oauth.id_tokens import id_token_alg
from application.oauth.settings import OidcSettings
from application.ports import Clock, DeliveryFailed, HttpSender, Signer, Storage
from application.shared.outbox import Outcome
from application.shared.settings import AuthSettings, Live
from domain.outbox import OutboxItem, backchannel_delay, next_try_at

__all__ = [
    "BACKCHANNEL_LOGOUT_EVENT",
    "LOGOUT_TOKEN_TTL",
    "LOGOUT_TOKEN_TYPE",
    "BackchannelLogoutDelivery",
    "logout_token_claims",
]

LOGOUT_TOKEN_TYPE = "logout+jwt"  # noqa: S105 - a media type, not a secret
"""The JWS ``typ`` of a logout token (Back-Channel Logout 1.0 §2.4, RFC 8725 §3.11)."""
BACKCHANNEL_LOGOUT_EVENT = "http://schemas.openid.net/event/backchannel-logout"
"""The member of a logout token's ``events`` claim (Back-Channel Logout 1.0 §2.4)."""
LOGOUT_TOKEN_TTL = 120
"""A logout token's ``exp - iat`` in seconds (the specification suggests at most two minutes)."""


def logout_token_claims(
    *, issuer: str, client_id: str, user_id: str, sid: str, now: datetime, jti: str
) -> dict[str, Any]:
    """``iss, aud (= client_id), iat, exp (iat + LOGOUT_TOKEN_TTL s), jti, sub, sid, events``
    (Back-Channel Logout 1.0 §2.4); never ``nonce``. Times in Unix seconds."""
    iat = int(now.timestamp())
    return {
        "iss": issuer, "aud": client_id, "iat": iat, "exp": iat + LOGOUT_TOKEN_TTL, "jti": jti,
        "sub": user_id, "sid": sid, "events": {BACKCHANNEL_LOGOUT_EVENT: {}},
    }  # fmt: skip


@attrs.frozen
class BackchannelLogoutDelivery:
    """The ``OutboxHandler`` of ``backchannel_logout`` items (payload ``client_id``,
    ``user_id``, ``sid``). A try signs a fresh logout token (``jti`` = the item id, so every
    retry carries the same one) with the algorithm of the client's ID tokens
    (``id_token_alg``) and POSTs it as ``application/x-www-form-urlencoded`` ``logout_token``;
    a 2xx answer is delivered (§2.8), anything else is retried 2, 4, 8 ... s apart (at most
    ``BACKCHANNEL_MAX_DELAY``) within ``oidc.backchannel_retry_window`` of the ending. A
    client deleted, disabled or without a ``backchannel_logout_uri`` by then is given up at
    once."""

    _storage: Storage
    _signer: Signer
    _sender: HttpSender
    _clock: Clock
    _auth: Live[AuthSettings]
    _oidc: Live[OidcSettings]

    async def deliver(self, item: OutboxItem) -> Outcome:
        """One try of ``item``."""
        client_id, user_id, sid = (item.payload[k] for k in ("client_id", "user_id", "sid"))
        async with self._storage.read() as uow:
            client = await uow.clients.get(client_id)
        if client is None or client.disabled or client.backchannel_logout_uri is None:
            return Outcome(False, "client_gone", final=True)
        cfg = self._auth.current
        claims = logout_token_claims(
            issuer=cfg.issuer, client_id=client_id, user_id=user_id, sid=sid,
            now=self._clock.now(), jti=item.id,
        )  # fmt: skip
        alg = self._signer.signing_algorithm(id_token_alg(cfg, client))
        token = await self._signer.sign(claims, typ=LOGOUT_TOKEN_TYPE, alg=alg)
        body = urlencode({"logout_token": token}).encode("ascii")
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        try:
            status = await self._sender.post(client.backchannel_logout_uri, body, headers)
        except DeliveryFailed as e:
            return Outcome(False, str(e), final=e.refused)
        if 200 <= status < 300:
            sent = BackchannelLogoutSent(user_id, client_id, sid, item.attempts + 1)
            return Outcome(True, events=(sent,))
        return Outcome(False, f"status {status}")

    def retry_at(self, item: OutboxItem, failed_at: datetime, attempts: int) -> datetime | None:
        """``failed_at`` + 2, 4, 8 ... s, unless past the retry window."""
        window = self._oidc.current.backchannel_retry_window
        return next_try_at(item.created_at, failed_at, backchannel_delay(attempts), window)

    def given_up(self, item: OutboxItem, reason: str) -> Sequence[Event]:
        """``BackchannelLogoutFailed`` (``client_gone`` or ``retry_window``)."""
        why = "client_gone" if reason == "client_gone" else "retry_window"
        p = item.payload
        return (BackchannelLogoutFailed(p["user_id"], p["client_id"], p["sid"], why),)
