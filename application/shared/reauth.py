"""Proofs of the user on routes that already carry its bearer token
(docs/reference/mfa-and-passkeys.md, ASVS 5.0 V7.5.1; ADR 0025).

- ``Reauthentication.confirm_password``: the routes that confirm the current password
  (``/me/password``, ``DELETE /me``, ``DELETE /me/mfa``, ``DELETE /me/passkeys/{id}``); a
  wrong one is 403 ``invalid_old_password``.
- ``Reauthentication.require``: the routes that add a sign-in factor
  (``POST /me/passkeys/registration/options``, ``POST /me/mfa/totp``) need a fresh proof — the
  password, or an assertion of one of the user's passkeys from ``/login/passkey/options`` in
  the same request, or an ID token of one of the user's linked providers issued at most 300 s
  ago (``provider``, ``id_token``, ``nonce``) — or, on the hosted account pages, a
  ``RecentLogin`` (a login in that hosted session at most ``ui.reauthentication_window``
  seconds ago, made only by ``application.login.hosted_account.HostedAccount.fresh``); without
  one, or with one that fails, 401 ``reauthentication_required``.

Every failed proof counts against the login throttle of the user's email and the client
address (``LoginThrottle``, docs/reference/tokens-and-sessions.md), which is asked first: past
``auth.login_max_failures`` the answer is 429 ``rate_limited`` before any password is checked,
so a stolen access token buys no more password guesses than the login allows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import attrs

from application.ports import Hasher
from application.shared.throttle import LoginThrottle
from domain.errors import (
    FieldError,
    InvalidOldPassword,
    ReauthenticationRequired,
    ValidationFailed,
)
from domain.model import BCRYPT_MAX_PASSWORD_BYTES, User

__all__ = [
    "FederatedCheck",
    "FreshProof",
    "PasskeyCheck",
    "Reauthentication",
    "RecentLogin",
    "password_matches",
]


class PasskeyCheck(Protocol):
    """What re-authentication needs of the passkeys capability
    (``application.passkeys.reauth.PasskeyProof`` implements it)."""

    async def belongs_to(
        self, user_id: str, ceremony_id: str, credential: Mapping[str, Any]
    ) -> bool:
        """True when ``credential`` (an ``AuthenticationResponseJSON``) answers the login
        ceremony ``ceremony_id`` with a valid assertion of one of ``user_id``'s passkeys."""
        ...


class FederatedCheck(Protocol):
    """What re-authentication needs of the federated login
    (``application.login.federated_proof.FederatedProof`` implements it)."""

    async def belongs_to(self, user_id: str, provider_id: str, id_token: str, nonce: str) -> bool:
        """True when ``id_token`` (with ``nonce``) is a fresh ID token of ``provider_id`` for an
        identity linked to ``user_id`` (the nonce is then spent)."""
        ...


async def password_matches(
    hasher: Hasher, throttle: LoginThrottle, user: User, password: str, client: str
) -> bool:
    """Is ``password`` the current password of ``user``, sent from ``client`` (its address)?
    Counts the attempt first, atomically with the throttle's check (``LoginThrottle.attempt``:
    raises ``RateLimited``, 429, past the limit — even for guesses sent at once), checks with
    bcrypt off the loop (one over 72 bytes is simply wrong), and on the right password forgets
    the pair's failures."""
    await throttle.attempt(user.email, client)
    too_long = len(password.encode("utf-8")) > BCRYPT_MAX_PASSWORD_BYTES
    if too_long or not await hasher.verify(password, user.password_hash):
        return False
    await throttle.succeeded(user.email, client)
    return True


@attrs.frozen
class RecentLogin:
    """A hosted session's login, found at most ``ui.reauthentication_window`` seconds old
    (docs/reference/accounts.md): ``user_id``, ``session_id`` (its ``sessions`` row) and
    ``id_hash`` (the cookie's SHA-256). Made only by ``HostedAccount.fresh``, after reading the
    session from storage; it proves the user for one page request and is never stored."""

    user_id: str
    session_id: str
    id_hash: str = attrs.field(repr=False)


@attrs.frozen
class FreshProof:
    """What a request adding a factor carries: ``password``, or ``ceremony_id`` and
    ``credential`` (an ``AuthenticationResponseJSON``), or ``provider``, ``id_token`` and
    ``nonce`` (an ID token of a linked provider), or ``recent_login`` (the hosted pages), or
    nothing."""

    password: str | None = attrs.field(default=None, repr=False)
    ceremony_id: str | None = None
    credential: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    provider: str | None = None
    id_token: str | None = attrs.field(default=None, repr=False)
    nonce: str | None = attrs.field(default=None, repr=False)
    recent_login: RecentLogin | None = None


@attrs.frozen
class Reauthentication:
    """``Reauthentication(hasher, throttle, passkeys, federated)``: checks a password, a
    passkey assertion or a linked provider's ID token of a known user, under the login
    throttle (``federated`` None: no ID tokens are taken)."""

    _hasher: Hasher
    _throttle: LoginThrottle
    _passkeys: PasskeyCheck
    _federated: FederatedCheck | None = None

    async def confirm_password(self, user: User, password: str, client: str) -> None:
        """The current password of ``user``, sent from ``client`` (its address). Raises
        ``RateLimited`` (429, asked first) or ``InvalidOldPassword`` (403, counted)."""
        if not await password_matches(self._hasher, self._throttle, user, password, client):
            raise InvalidOldPassword("the password is wrong")

    async def require(self, user: User, proof: FreshProof, client: str) -> None:
        """A fresh proof of ``user`` before a factor is added. Raises ``ValidationFailed``
        (422) for two kinds of proof at once, or half an assertion or ID token proof;
        ``RateLimited`` (429, asked first); ``ReauthenticationRequired`` (401) without a proof
        or for a wrong password, a refused assertion or a refused ID token (each counted by
        the throttle). A ``recent_login`` of ``user`` is enough alone; of another user it is
        refused (401)."""
        if proof.recent_login is not None:
            if proof.recent_login.user_id != user.id:
                raise ReauthenticationRequired("the recent login is another user's")
            return
        by_passkey = proof.ceremony_id is not None or proof.credential is not None
        by_provider = proof.provider is not None or proof.id_token is not None
        if sum((proof.password is not None, by_passkey, by_provider)) > 1:
            raise ValidationFailed([FieldError(
                "password", "give a password, or a ceremony_id and a credential, or a provider"
                " and an id_token")])  # fmt: skip
        if by_provider:
            await self._by_provider(user, proof, client)
            return
        if proof.password is not None:
            if await password_matches(self._hasher, self._throttle, user, proof.password, client):
                return
            raise ReauthenticationRequired("the password is wrong")
        if not by_passkey:
            raise ReauthenticationRequired(
                "confirm who you are: send the password, or a passkey assertion"
                " (ceremony_id and credential from /login/passkey/options)"
            )
        if proof.ceremony_id is None or proof.credential is None:
            field = "credential" if proof.credential is None else "ceremony_id"
            raise ValidationFailed([FieldError(field, "ceremony_id and credential go together")])
        attempt = await self._throttle.attempt(user.email, client)
        if not await self._passkeys.belongs_to(user.id, proof.ceremony_id, proof.credential):
            raise ReauthenticationRequired("the passkey assertion was refused")
        await self._throttle.release(attempt)

    async def _by_provider(self, user: User, proof: FreshProof, client: str) -> None:
        """The ID-token proof: ``provider`` and ``id_token`` together (else 422); refused (401,
        counted) when not a fresh token of a provider linked to ``user``, nonce missing too."""
        if proof.provider is None or proof.id_token is None:
            field = "id_token" if proof.id_token is None else "provider"
            raise ValidationFailed([FieldError(field, "provider and id_token go together")])
        attempt = await self._throttle.attempt(user.email, client)
        ok = self._federated is not None and await self._federated.belongs_to(
            user.id, proof.provider, proof.id_token, proof.nonce or ""
        )
        if not ok:
            raise ReauthenticationRequired("the ID token was refused")
        await self._throttle.release(attempt)
