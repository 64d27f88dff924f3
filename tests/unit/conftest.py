"""Fixtures for use-case tests: in-memory adapters, a real signer in a temp key dir, a fake clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.crypto.bcrypt_hasher import BcryptHasher
from adapters.crypto.jwt_signer import JwtSigner
from adapters.email_address import normalize_email
from adapters.events.inprocess import InProcessEventBus
from adapters.persistence.memory import MemoryLoginAttempts, MemoryStorage
from application.login.auth import AuthService
from application.shared.reauth import Reauthentication
from application.shared.settings import AuthSettings, Live
from application.shared.throttle import LoginThrottle
from tests.factories import make_reauth, make_tokens
from tests.fakes import FakeClock, Recorder


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def auth_settings(tmp_path: Path) -> Live[AuthSettings]:
    return Live(AuthSettings(bcrypt_rounds=4, key_dir=str(tmp_path / "keys")))


@pytest.fixture
def storage() -> MemoryStorage:
    return MemoryStorage()


@pytest.fixture
def bus() -> InProcessEventBus:
    return InProcessEventBus()


@pytest.fixture
def recorder(bus: InProcessEventBus) -> Recorder:
    return Recorder(bus)


@pytest.fixture
def signer(auth_settings: Live[AuthSettings], clock: FakeClock) -> JwtSigner:
    return JwtSigner.from_settings(auth_settings.current, clock)


@pytest.fixture
def hasher(auth_settings: Live[AuthSettings]) -> BcryptHasher:
    return BcryptHasher(auth_settings)


@pytest.fixture
def reauth(
    storage: MemoryStorage,
    hasher: BcryptHasher,
    clock: FakeClock,
    auth_settings: Live[AuthSettings],
) -> Reauthentication:
    return make_reauth(storage, hasher, clock, auth_settings)


@pytest.fixture
def service(
    storage: MemoryStorage,
    hasher: BcryptHasher,
    signer: JwtSigner,
    bus: InProcessEventBus,
    clock: FakeClock,
    auth_settings: Live[AuthSettings],
) -> AuthService:
    throttle = LoginThrottle(MemoryLoginAttempts(), clock, auth_settings)
    issuer, rotation = make_tokens(storage, signer, bus, clock, auth_settings)
    return AuthService(
        storage, hasher, signer, bus, clock, auth_settings, normalize_email, throttle, issuer,
        rotation,
    )  # fmt: skip
