"""Passkey registration and the caller's passkeys (docs/reference/mfa-and-passkeys.md), through the
use cases over the in-memory store with the software authenticator: the opaque user handle, excluded
credentials, single-use ceremonies bound to their user and expiring after 300 s, a failed check that
still uses the ceremony up, a credential registered once, rename and delete with the password."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.events.inprocess import InProcessEventBus
from adapters.persistence.memory import MemoryStorage
from adapters.webauthn.py_webauthn import PyWebAuthn
from application.events.passkeys import PasskeyRegistered, PasskeyRemoved
from application.login.auth import AuthService
from application.passkeys.registration import OwnPasskeys, PasskeyRegistration
from application.passkeys.settings import WebAuthnSettings
from application.shared.reauth import FreshProof
from application.shared.settings import AuthSettings, Live
from domain.errors import (
    InvalidCeremony,
    InvalidOldPassword,
    InvalidPasskey,
    NotFound,
    PasskeyExists,
)
from tests.factories import make_reauth
from tests.fakes import FakeClock, Recorder
from tests.webauthn_authenticator import SoftAuthenticator, b64url, b64url_decode

PASSWORD = "correct horse battery"
CLIENT = "192.0.2.7"
ORIGIN = "http://localhost:8080"  # the default auth.issuer's origin


class Keys:
    def __init__(self, storage: MemoryStorage, bus: InProcessEventBus, clock: FakeClock,
                 auth: Live[AuthSettings], hasher: Any) -> None:  # fmt: skip
        reauth = make_reauth(storage, hasher, clock, auth)
        self.registration = PasskeyRegistration(
            storage, PyWebAuthn(), bus, clock, auth, Live(WebAuthnSettings()), reauth
        )
        self.own = OwnPasskeys(storage, bus, reauth, clock)
        self.clock = clock

    async def register(self, user_id: str, device: SoftAuthenticator, **kwargs: Any) -> Any:
        started = await self.registration.start(user_id, FreshProof(PASSWORD), CLIENT)
        response = device.register(started.options, kwargs.pop("origin", ORIGIN), **kwargs)
        return await self.registration.finish(user_id, started.ceremony_id, response, "laptop")


@pytest.fixture
def keys(storage: MemoryStorage, bus: InProcessEventBus, clock: FakeClock,
         auth_settings: Live[AuthSettings], hasher: Any) -> Keys:  # fmt: skip
    return Keys(storage, bus, clock, auth_settings, hasher)


async def _user(service: AuthService, email: str = "alice@example.com") -> str:
    return (await service.register(email, PASSWORD)).id


async def test_register_with_an_opaque_handle_and_excluded_credentials(
    keys: Keys, service: AuthService, recorder: Recorder
) -> None:
    alice = await _user(service)
    started = await keys.registration.start(alice, FreshProof(PASSWORD), CLIENT)
    handle = b64url_decode(started.options["user"]["id"])
    assert len(handle) == 32 and alice.encode() not in handle
    assert started.options["user"]["name"] == "alice@example.com"
    assert started.options.get("excludeCredentials", []) == []
    device = SoftAuthenticator("ES256")
    response = device.register(started.options, ORIGIN)
    passkey = await keys.registration.finish(alice, started.ceremony_id, response, " laptop ")
    assert (passkey.user_id, passkey.name, passkey.credential_id) == (alice, "laptop",
                                                                      device.credential_id)  # fmt: skip
    assert passkey.transports == ("internal",)
    assert recorder.of(PasskeyRegistered) == [PasskeyRegistered(alice, passkey.id)]
    again = await keys.registration.start(alice, FreshProof(PASSWORD), CLIENT)
    assert b64url_decode(again.options["user"]["id"]) == handle  # the same handle
    assert [d["id"] for d in again.options["excludeCredentials"]] == [b64url(device.credential_id)]
    assert [p.id for p in await keys.own.list(alice)] == [passkey.id]


async def test_a_ceremony_is_used_once_by_its_own_user_within_300_s(
    keys: Keys, service: AuthService
) -> None:
    alice, bob = await _user(service), await _user(service, "bob@example.com")
    started = await keys.registration.start(alice, FreshProof(PASSWORD), CLIENT)
    response = SoftAuthenticator("ES256").register(started.options, ORIGIN)
    with pytest.raises(InvalidCeremony):  # another user's ceremony (and now used up)
        await keys.registration.finish(bob, started.ceremony_id, response)
    with pytest.raises(InvalidCeremony):
        await keys.registration.finish(alice, started.ceremony_id, response)
    late = await keys.registration.start(alice, FreshProof(PASSWORD), CLIENT)
    keys.clock.advance(300)
    response = SoftAuthenticator("ES256").register(late.options, ORIGIN)
    with pytest.raises(InvalidCeremony):
        await keys.registration.finish(alice, late.ceremony_id, response)
    with pytest.raises(InvalidCeremony):
        await keys.registration.finish(alice, "no-such-ceremony", response)
    assert await keys.own.list(alice) == []


async def test_a_failed_check_uses_the_ceremony_up_and_stores_nothing(
    keys: Keys, service: AuthService
) -> None:
    alice = await _user(service)
    started = await keys.registration.start(alice, FreshProof(PASSWORD), CLIENT)
    device = SoftAuthenticator("ES256")
    bad = device.register(started.options, "https://evil.example.com")
    with pytest.raises(InvalidPasskey):
        await keys.registration.finish(alice, started.ceremony_id, bad)
    good = device.register(started.options, ORIGIN)
    with pytest.raises(InvalidCeremony):
        await keys.registration.finish(alice, started.ceremony_id, good)
    assert await keys.own.list(alice) == []


async def test_a_credential_is_registered_once(keys: Keys, service: AuthService) -> None:
    alice, bob = await _user(service), await _user(service, "bob@example.com")
    device = SoftAuthenticator("EdDSA")
    await keys.register(alice, device)
    with pytest.raises(PasskeyExists):
        await keys.register(bob, device)
    assert await keys.own.list(bob) == []


async def test_rename_and_delete_with_the_password(
    keys: Keys, service: AuthService, recorder: Recorder
) -> None:
    alice, bob = await _user(service), await _user(service, "bob@example.com")
    passkey = await keys.register(alice, SoftAuthenticator("RS256"))
    assert (await keys.own.rename(alice, passkey.id, "phone")).name == "phone"
    with pytest.raises(NotFound):
        await keys.own.rename(bob, passkey.id, "mine now")
    with pytest.raises(InvalidOldPassword):
        await keys.own.delete(alice, passkey.id, "wrong password", CLIENT)
    with pytest.raises(NotFound):
        await keys.own.delete(bob, passkey.id, PASSWORD, CLIENT)
    assert [p.name for p in await keys.own.list(alice)] == ["phone"]
    await keys.own.delete(alice, passkey.id, PASSWORD, CLIENT)
    assert await keys.own.list(alice) == []
    assert recorder.of(PasskeyRemoved) == [PasskeyRemoved(alice, passkey.id, alice)]
