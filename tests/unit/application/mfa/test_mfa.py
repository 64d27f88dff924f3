"""The MFA use cases (docs/reference/mfa-and-passkeys.md) over the in-memory adapters with a
controlled clock: enrolment, the second login step, one-time codes, the throttle, turning MFA
off."""

from __future__ import annotations

import asyncio
import os

import pyotp
import pytest

from adapters.crypto.bcrypt_hasher import BcryptHasher
from adapters.crypto.jwt_signer import JwtSigner
from adapters.crypto.sealer import AesGcmSealer
from adapters.email_address import normalize_email
from adapters.events.inprocess import InProcessEventBus
from adapters.mfa.totp import PyotpTotp
from adapters.persistence.memory import MemoryLoginAttempts, MemoryStorage
from application.events.catalog import (
    LoginSucceeded,
    MfaChallenged,
    MfaDisabled,
    MfaEnabled,
    MfaFailed,
)
from application.login.auth import AuthService
from application.login.mfa_step import MfaLogin
from application.mfa.totp import MfaEnrolment
from application.shared.reauth import FreshProof
from application.shared.settings import AuthSettings, Live
from application.shared.throttle import LoginThrottle
from domain.errors import (
    Conflict,
    InvalidMfaCode,
    InvalidOldPassword,
    MfaRequired,
    RateLimited,
    ValidationFailed,
)
from domain.model import User
from tests.factories import make_reauth, make_tokens
from tests.fakes import FakeClock, Recorder

PASSWORD = "correct horse battery"
EMAIL = "alice@example.com"
CLIENT = "192.0.2.7"


class World:
    """The auth service, enrolment and second step over one memory storage."""

    def __init__(
        self,
        storage: MemoryStorage,
        hasher: BcryptHasher,
        signer: JwtSigner,
        bus: InProcessEventBus,
        clock: FakeClock,
        settings: Live[AuthSettings],
    ) -> None:
        self.clock, self.storage = clock, storage
        throttle = LoginThrottle(MemoryLoginAttempts(), clock, settings)
        self.sealer = AesGcmSealer(os.urandom(32))
        totp = PyotpTotp()
        issuer, rotation = make_tokens(storage, signer, bus, clock, settings)
        self.auth = AuthService(
            storage, hasher, signer, bus, clock, settings, normalize_email, throttle, issuer,
            rotation,
        )  # fmt: skip
        reauth = make_reauth(storage, hasher, clock, settings)
        self.enrolment = MfaEnrolment(storage, totp, self.sealer, reauth, bus, clock, settings)
        self.mfa_login = MfaLogin(
            storage, totp, self.sealer, issuer, bus, clock, settings, throttle
        )

    async def enrolled(self) -> tuple[User, str, list[str]]:
        """Alice registered with MFA on: (user, secret, recovery codes); the clock then moves
        to the next step (the confirming code is spent)."""
        user = await self.auth.register(EMAIL, PASSWORD)
        enrolment = await self.enrolment.start(user.id, FreshProof(PASSWORD), CLIENT)
        codes = await self.enrolment.confirm(user.id, self.code(enrolment.secret))
        self.clock.advance(30)
        return user, enrolment.secret, codes

    def code(self, secret: str, offset: float = 0) -> str:
        return pyotp.TOTP(secret).at(self.clock.now().timestamp() + offset)

    async def mfa_token(self) -> str:
        with pytest.raises(MfaRequired) as info:
            await self.auth.login(EMAIL, PASSWORD, CLIENT)
        return info.value.mfa_token

    async def user(self, user_id: str) -> User:
        async with self.storage.begin() as uow:
            found = await uow.users.get(user_id)
        assert found is not None
        return found


@pytest.fixture
def world(
    storage: MemoryStorage,
    hasher: BcryptHasher,
    signer: JwtSigner,
    bus: InProcessEventBus,
    clock: FakeClock,
    auth_settings: Live[AuthSettings],
) -> World:
    clock.advance(1_800_000_000 - clock.now().timestamp())  # a step boundary, 2027
    return World(storage, hasher, signer, bus, clock, auth_settings)


async def test_enrolment_is_pending_until_a_code_confirms_it(world: World) -> None:
    user = await world.auth.register(EMAIL, PASSWORD)
    first = await world.enrolment.start(user.id, FreshProof(PASSWORD), CLIENT)
    again = await world.enrolment.start(
        user.id, FreshProof(PASSWORD), CLIENT
    )  # replaces the pending one
    assert first.secret != again.secret
    assert "issuer=authsvc" in again.otpauth_uri and again.qr_svg.startswith("<svg")
    assert not (await world.user(user.id)).mfa_enabled
    with pytest.raises(ValidationFailed):
        await world.enrolment.confirm(user.id, world.code(first.secret))
    assert not (await world.user(user.id)).mfa_enabled
    codes = await world.enrolment.confirm(user.id, world.code(again.secret))
    assert len(codes) == len(set(codes)) == 10
    assert (await world.user(user.id)).mfa_enabled
    with pytest.raises(Conflict):
        await world.enrolment.start(user.id, FreshProof(PASSWORD), CLIENT)
    with pytest.raises(Conflict):
        await world.enrolment.confirm(user.id, world.code(again.secret))


async def test_login_needs_the_second_step_and_each_code_works_once(
    world: World, recorder: Recorder
) -> None:
    user, secret, _ = await world.enrolled()
    token = await world.mfa_token()
    assert recorder.of(MfaChallenged) == [MfaChallenged(user.id, CLIENT)]
    pair = await world.mfa_login.complete(token, world.code(secret), CLIENT)
    assert pair.access_token and pair.refresh_token
    assert [e.user_id for e in recorder.of(LoginSucceeded)] == [user.id]
    with pytest.raises(InvalidMfaCode):  # the token is spent
        await world.mfa_login.complete(token, world.code(secret), CLIENT)
    with pytest.raises(InvalidMfaCode):  # a fresh token, the same code: replay
        await world.mfa_login.complete(await world.mfa_token(), world.code(secret), CLIENT)
    world.clock.advance(30)
    await world.mfa_login.complete(await world.mfa_token(), world.code(secret), CLIENT)


async def test_the_code_that_confirmed_cannot_log_in(world: World) -> None:
    user = await world.auth.register(EMAIL, PASSWORD)
    enrolment = await world.enrolment.start(user.id, FreshProof(PASSWORD), CLIENT)
    code = world.code(enrolment.secret)
    await world.enrolment.confirm(user.id, code)
    with pytest.raises(InvalidMfaCode):
        await world.mfa_login.complete(await world.mfa_token(), code, CLIENT)


async def test_concurrent_uses_of_one_code_give_exactly_one_session(world: World) -> None:
    _, secret, _ = await world.enrolled()
    tokens = [await world.mfa_token() for _ in range(3)]
    code = world.code(secret)
    results = await asyncio.gather(
        *(world.mfa_login.complete(t, code, CLIENT) for t in [tokens[0], *tokens]),
        return_exceptions=True,
    )
    assert sum(not isinstance(r, BaseException) for r in results) == 1
    assert all(isinstance(r, InvalidMfaCode) for r in results if isinstance(r, BaseException))


async def test_a_recovery_code_works_once_in_any_case_or_spacing(world: World) -> None:
    _, _, codes = await world.enrolled()
    typed = codes[0].upper().replace("-", " ")
    await world.mfa_login.complete(await world.mfa_token(), typed, CLIENT)
    with pytest.raises(InvalidMfaCode):
        await world.mfa_login.complete(await world.mfa_token(), codes[0], CLIENT)
    await world.mfa_login.complete(await world.mfa_token(), codes[1], CLIENT)


async def test_the_fifth_wrong_code_voids_the_mfa_token(
    world: World, recorder: Recorder, auth_settings: Live[AuthSettings]
) -> None:
    _, secret, _ = await world.enrolled()
    token = await world.mfa_token()
    for _ in range(5):
        with pytest.raises(InvalidMfaCode):
            await world.mfa_login.complete(token, "000000", CLIENT)
    assert [e.reason for e in recorder.of(MfaFailed)] == ["wrong_code"] * 4 + ["voided"]
    with pytest.raises((InvalidMfaCode, RateLimited)):
        await world.mfa_login.complete(token, world.code(secret), CLIENT)


async def test_wrong_codes_feed_the_login_throttle_and_a_password_does_not_reset_it(
    world: World, auth_settings: Live[AuthSettings]
) -> None:
    _, secret, _ = await world.enrolled()
    limit = auth_settings.current.login_max_failures
    for _ in range(limit):
        with pytest.raises(InvalidMfaCode):
            await world.mfa_login.complete(await world.mfa_token(), "000000", CLIENT)
    with pytest.raises(RateLimited):  # the password step itself is throttled now
        await world.auth.login(EMAIL, PASSWORD, CLIENT)
    world.clock.advance(auth_settings.current.login_failure_window + 1)
    token = await world.mfa_token()
    await world.mfa_login.complete(token, world.code(secret), CLIENT)


async def test_a_right_password_is_no_failure_and_a_right_fifth_code_still_logs_in(
    world: World, auth_settings: Live[AuthSettings]
) -> None:
    """Attempts are counted before the check (docs/reference/mfa-and-passkeys.md); the ones that
    turn out right are uncounted again: the password step of an MFA login, and a right code among
    the five tries of an ``mfa_token``."""
    _, secret, _ = await world.enrolled()
    for _ in range(auth_settings.current.login_max_failures + 2):
        token = await world.mfa_token()  # never RateLimited: a right password is no failure
    for _ in range(4):
        with pytest.raises(InvalidMfaCode):
            await world.mfa_login.complete(token, "000000", CLIENT)
    assert (await world.mfa_login.complete(token, world.code(secret), CLIENT)).access_token


async def test_an_expired_mfa_token_is_refused(
    world: World, auth_settings: Live[AuthSettings]
) -> None:
    _, secret, _ = await world.enrolled()
    token = await world.mfa_token()
    world.clock.advance(auth_settings.current.mfa_token_ttl)
    with pytest.raises(InvalidMfaCode):
        await world.mfa_login.complete(token, world.code(secret), CLIENT)


async def test_disable_needs_the_password_then_login_is_one_step(
    world: World, recorder: Recorder
) -> None:
    user, _, _ = await world.enrolled()
    with pytest.raises(InvalidOldPassword):
        await world.enrolment.disable(user.id, "wrong password", CLIENT)
    assert (await world.user(user.id)).mfa_enabled
    await world.enrolment.disable(user.id, PASSWORD, CLIENT)
    assert not (await world.user(user.id)).mfa_enabled
    assert recorder.of(MfaDisabled) == [MfaDisabled(user.id, user.id)]
    assert recorder.of(MfaEnabled) == [MfaEnabled(user.id)]
    assert (await world.auth.login(EMAIL, PASSWORD, CLIENT)).access_token
    await world.enrolment.disable(user.id, PASSWORD, CLIENT)  # already off: no error, no event
    assert len(recorder.of(MfaDisabled)) == 1


async def test_a_lost_sealing_key_leaves_recovery_codes_working(world: World) -> None:
    _, secret, codes = await world.enrolled()
    object.__setattr__(world.mfa_login, "_sealer", AesGcmSealer(os.urandom(32)))
    with pytest.raises(InvalidMfaCode):
        await world.mfa_login.complete(await world.mfa_token(), world.code(secret), CLIENT)
    await world.mfa_login.complete(await world.mfa_token(), codes[0], CLIENT)


async def test_events_never_carry_a_secret_code_or_token(world: World, recorder: Recorder) -> None:
    _, secret, codes = await world.enrolled()
    token = await world.mfa_token()
    with pytest.raises(InvalidMfaCode):
        await world.mfa_login.complete(token, "123456", CLIENT)
    code = world.code(secret)
    await world.mfa_login.complete(token, code, CLIENT)
    text = " ".join(repr(e) for e in recorder.events)
    for secret_value in (secret, token, code, "123456", *codes):
        assert secret_value not in text
