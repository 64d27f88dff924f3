"""Linking another provider's identity from the account page (``docs/reference/federation.md``; ADR
0034).

A link starts only from a POST of ``/ui/account`` (the hosted pages' CSRF checks) by a user
whose hosted login is recent (``FederatedLogin.begin``). Its callback writes nothing: it
stores the identity the provider proved as a *link offer* — a ``federation_flows`` row with
``upstream`` set, keyed by the SHA-256 of a new 256-bit token and bound to the same browser —
and the account page asks the user to confirm, naming the provider and the upstream email.
Only that confirmation (a POST with the token, by the same signed-in user in the same
browser, within ``federation.state_ttl``) links. So an upstream session the user does not
own — a shared computer, an upstream login CSRF — cannot be linked silently (ASVS 5.0
V7.5.1; OWASP CSRF Prevention: no state change on GET).
"""

from __future__ import annotations

import hashlib
import secrets

import attrs

from application.events.audit import record
from application.events.federation import IdentityLinked
from application.federation.settings import FederationSettings
from application.ports import Clock, EventBus, Storage
from application.shared.settings import Live
from domain import errors
from domain.federation import FederatedIdentity, FederationFlow, UpstreamIdentity

__all__ = ["LinkOffer", "confirm_link", "offer_link"]


def _sha256(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


@attrs.frozen
class LinkOffer:
    """A link waiting for the user's yes: ``token`` (43 characters, 256 bits; only its SHA-256
    is stored), ``provider`` (its id), ``email`` (the upstream email, or None), ``return_to``
    (a path of this service)."""

    token: str = attrs.field(repr=False)
    provider: str
    email: str | None
    return_to: str


async def offer_link(
    storage: Storage, clock: Clock, flow: FederationFlow, who: UpstreamIdentity,
    email: str | None,
) -> LinkOffer:  # fmt: skip
    """Store the identity ``who`` that the link ``flow``'s callback proved (``email``: its
    normalized email, or None) as an offer for the same user and browser, as long-lived as the
    flow was; returns it. Raises what the storage raises."""
    token = secrets.token_urlsafe(32)
    now = clock.now()
    offer = FederationFlow(
        _sha256(token), flow.provider, flow.browser_hash, "", "", flow.return_to,
        flow.link_user_id, now, now + (flow.expires_at - flow.created_at),
        UpstreamIdentity(who.issuer, who.subject, email),
    )  # fmt: skip
    async with storage.begin() as uow:
        await uow.identities.put_flow(offer)
        await uow.commit()
    return LinkOffer(token, flow.provider, email, flow.return_to)


async def confirm_link(
    storage: Storage, bus: EventBus, clock: Clock, federation: Live[FederationSettings],
    token: str, browser: str, user_id: str, accept: bool,
) -> str:  # fmt: skip
    """The user ``user_id`` (signed in, in the browser of cookie value ``browser``) answers the
    offer ``token``: with ``accept`` the identity is linked (``identity.linked``, ``how =
    "account"``; ``email_was_verified`` as the user's email is now), else dropped. Either way
    the offer is spent. Returns the offer's ``return_to``.

    Raises ``FederationFailed`` (400) for an unknown, spent, expired offer, another user's or
    another browser's, or one of a provider disabled since; ``Conflict`` (409) when another
    user has this identity or this user one of the provider. On any error nothing is linked.
    """
    if not token or len(token) > 128 or not browser or len(browser) > 128:
        raise errors.FederationFailed("this link request expired: start again")
    now = clock.now()
    async with storage.begin() as uow:
        offer = await uow.identities.take_flow(_sha256(token), _sha256(browser))
        await uow.commit()
    who = None if offer is None else offer.upstream
    if (offer is None or who is None or offer.link_user_id != user_id
            or offer.expires_at <= now
            or federation.current.provider(offer.provider) is None):  # fmt: skip
        raise errors.FederationFailed("this link request expired: start again")
    if not accept:
        return offer.return_to
    async with storage.begin() as uow:
        user = await uow.users.get(user_id)
        known = await uow.identities.find(who.issuer, who.subject)
        if user is None:
            raise errors.FederationFailed("this link request expired: start again")
        if known is not None and known.user_id == user_id:
            return offer.return_to
        if known is not None:
            raise errors.Conflict("this identity is linked to another account")
        identity = FederatedIdentity(who.issuer, who.subject, offer.provider, user_id, who.email,
                                     now, email_was_verified=user.email_verified)  # fmt: skip
        await uow.identities.add(identity)  # Conflict: one of this provider already
        event = IdentityLinked(user_id, offer.provider, "account")
        await record(uow, [event], now)
        await uow.commit()
    await bus.publish(event)
    return offer.return_to
