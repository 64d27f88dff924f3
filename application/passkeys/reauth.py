"""A passkey assertion as a fresh proof of a known user (docs/reference/mfa-and-passkeys.md): the
re-authentication that adding a sign-in factor asks of a user, for one without a password or
one who prefers its passkey (``application.shared.reauth``).

The ceremony comes from ``/login/passkey/options`` (discoverable, or with the user's email) and
is used up whatever follows. The assertion must be of a passkey of *that* user, not flagged
``suspected_clone``, and pass the checks of WebAuthn L3 §7.2 (``WebAuthn`` port); a
``userHandle``, when present, must be the user's. The passkey's counter and last use are then
stored. Unlike a login it starts no session and resets no throttle.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from application.passkeys.assertions import (
    credential_id_of,
    handle_refused,
    take_login_ceremony,
    user_handle_of,
)
from application.passkeys.settings import WebAuthnSettings, relying_party
from application.ports import Clock, Storage, WebAuthn
from application.shared.settings import AuthSettings, Live
from domain.errors import InvalidPasskey

__all__ = ["PasskeyProof"]


@attrs.frozen
class PasskeyProof:
    """``belongs_to(user_id, ceremony_id, credential)``: is this assertion a valid one of a
    passkey of ``user_id``? ``PasskeyProof(storage, webauthn, clock, auth_settings,
    webauthn_settings)``."""

    _storage: Storage
    _webauthn: WebAuthn
    _clock: Clock
    _auth: Live[AuthSettings]
    _settings: Live[WebAuthnSettings]

    async def belongs_to(
        self, user_id: str, ceremony_id: str, credential: Mapping[str, Any]
    ) -> bool:
        """True when ``credential`` (an ``AuthenticationResponseJSON``) answers the login
        ceremony ``ceremony_id`` with a valid assertion of one of ``user_id``'s passkeys; the
        passkey's counter, backup state and last use are then stored. False for anything else:
        an unknown, used, expired or bound (``mfa_token``, another user's email) ceremony, an
        unknown, flagged or another user's passkey, a failed check. The ceremony is used up
        either way."""
        now = self._clock.now()
        ceremony = await take_login_ceremony(self._storage, ceremony_id, now)  # used up
        if ceremony is None or ceremony.user_id not in (None, user_id):
            return False
        raw = credential_id_of(credential)
        handle = user_handle_of(credential)
        async with self._storage.read() as uow:
            passkey = None if raw is None else await uow.passkeys.by_credential_id(raw)
            owner = None if handle is None else await uow.passkeys.user_for_handle(handle)
        if passkey is None or passkey.user_id != user_id or passkey.suspected_clone:
            return False
        if handle_refused(handle, owner, passkey, needed=False):
            return False
        rp = relying_party(self._auth.current.issuer, self._settings.current)
        try:
            seen = self._webauthn.verify_authentication(
                rp, credential, ceremony.challenge, passkey.public_key, passkey.sign_count
            )
        except InvalidPasskey:
            return False
        used = attrs.evolve(
            passkey, sign_count=seen.sign_count, backed_up=seen.backed_up, last_used_at=now
        )
        async with self._storage.begin() as uow:  # compare-and-set: a concurrent use wins
            stored = await uow.passkeys.record_use(used, passkey.sign_count)
            await uow.commit()
        return stored
