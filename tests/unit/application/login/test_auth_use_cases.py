"""Use cases of docs/reference/tokens-and-sessions.md over the in-memory adapters with a controlled
clock."""

from __future__ import annotations

import asyncio
import re

import attrs
import bcrypt
import jwt
import pytest

from adapters.crypto.bcrypt_hasher import BcryptHasher
from adapters.persistence.memory import MemoryStorage
from application.events.catalog import (
    LoginFailed,
    LoginSucceeded,
    PasswordChanged,
    RefreshTokenReuseDetected,
    UserRegistered,
)
from application.login.auth import AuthService
from application.sessions.tokens import hash_refresh_token
from application.shared.settings import AuthSettings, Live
from domain.errors import (
    EmailTaken,
    InvalidCredentials,
    InvalidOldPassword,
    InvalidRefreshToken,
    InvalidToken,
    RateLimited,
    ValidationFailed,
)
from domain.model import Role
from tests.factories import make_tokens
from tests.fakes import FakeClock, Recorder

PASSWORD = "correct horse battery"
CLIENT = "192.0.2.7"


async def _user_count(storage: MemoryStorage) -> int:
    async with storage.begin() as uow:
        return len(await uow.users.list_page(None, None, 1000))


# --- register -----------------------------------------------------------------------------


async def test_register_creates_viewer_in_default_org_with_bcrypt_hash(
    service: AuthService, storage: MemoryStorage, recorder: Recorder
) -> None:
    user = await service.register("Alice@Example.COM", PASSWORD)
    assert user.email == "alice@example.com"
    assert user.role is Role.VIEWER
    assert user.org_id == "default"
    assert user.password_hash != PASSWORD
    assert bcrypt.checkpw(PASSWORD.encode(), user.password_hash.encode())
    assert recorder.of(UserRegistered) == [UserRegistered(user_id=user.id, org_id="default")]


async def test_register_duplicate_email_case_insensitive_writes_nothing(
    service: AuthService, storage: MemoryStorage
) -> None:
    await service.register("bob@example.com", PASSWORD)
    with pytest.raises(EmailTaken):
        await service.register("BOB@example.com", PASSWORD)
    assert await _user_count(storage) == 1


@pytest.mark.parametrize(
    ("email", "password", "field", "fragment"),
    [
        ("not-an-email", PASSWORD, "email", "@"),
        ("a@example.com", "short", "password", "at least 8"),
        ("a@example.com", "x" * 73, "password", "72 bytes"),
        ("a@example.com", "é" * 37, "password", "72 bytes"),  # 74 bytes, 37 characters
    ],
)
async def test_register_rejects_bad_input_and_writes_nothing(
    service: AuthService,
    storage: MemoryStorage,
    email: str,
    password: str,
    field: str,
    fragment: str,
) -> None:
    with pytest.raises(ValidationFailed) as info:
        await service.register(email, password)
    assert info.value.errors[0].field == field
    assert fragment in info.value.errors[0].message
    assert await _user_count(storage) == 0


async def test_register_accepts_exactly_72_bytes(service: AuthService) -> None:
    password = "é" * 36  # 72 bytes
    await service.register("max@example.com", password)
    pair = await service.login("max@example.com", password, "127.0.0.1")
    assert pair.access_token


# --- login --------------------------------------------------------------------------------


async def test_login_issues_access_token_with_contract_claims(
    service: AuthService, signer, auth_settings: Live[AuthSettings], recorder: Recorder
) -> None:
    user = await service.register("carol@example.com", PASSWORD)
    pair = await service.login("Carol@Example.com", PASSWORD, "10.0.0.1")
    cfg = auth_settings.current
    claims = jwt.decode(pair.access_token, options={"verify_signature": False})
    assert set(claims) == {"sub", "email", "role", "org_id", "iss", "aud", "iat", "exp",
                           "groups", "jti"}  # fmt: skip
    assert claims["sub"] == user.id
    assert claims["email"] == "carol@example.com"
    assert claims["role"] == "viewer"
    assert claims["groups"] == []
    assert claims["iss"] == cfg.issuer and claims["aud"] == cfg.audience
    assert claims["exp"] - claims["iat"] == cfg.access_token_ttl == pair.expires_in
    assert re.fullmatch(r"[0-9a-f]{12}", claims["jti"])
    assert pair.token_type == "Bearer"
    assert pair.refresh_expires_in == cfg.refresh_token_ttl
    assert len(pair.refresh_token) >= 43  # 256 bits, base64url
    assert [e.user_id for e in recorder.of(LoginSucceeded)] == [user.id]


async def test_login_unknown_email_and_wrong_password_fail_alike(
    service: AuthService, recorder: Recorder
) -> None:
    await service.register("dave@example.com", PASSWORD)
    with pytest.raises(InvalidCredentials) as wrong:
        await service.login("dave@example.com", "wrong password", "1.1.1.1")
    with pytest.raises(InvalidCredentials) as unknown:
        await service.login("nobody@example.com", "wrong password", "1.1.1.1")
    assert str(wrong.value) == str(unknown.value)
    failed = recorder.of(LoginFailed)
    assert [f.reason for f in failed] == ["wrong_password", "unknown_email"]
    assert all("example.com" not in repr(f) for f in failed)  # no email in events


class CountingHasher:
    """Wraps the real hasher to count checks (a spy; the hashing itself stays real)."""

    def __init__(self, inner: BcryptHasher) -> None:
        self.inner = inner
        self.verifies: list[bool] = []

    async def hash(self, password: str) -> str:
        return await self.inner.hash(password)

    async def verify(self, password: str, password_hash: str | None) -> bool:
        self.verifies.append(password_hash is None)
        return await self.inner.verify(password, password_hash)


async def test_login_unknown_email_spends_one_dummy_bcrypt_check(
    storage, hasher, signer, bus, clock, auth_settings
) -> None:
    from adapters.email_address import normalize_email
    from adapters.persistence.memory import MemoryLoginAttempts
    from application.shared.throttle import LoginThrottle

    spy = CountingHasher(hasher)
    throttle = LoginThrottle(MemoryLoginAttempts(), clock, auth_settings)
    issuer, rotation = make_tokens(storage, signer, bus, clock, auth_settings)
    service = AuthService(
        storage, spy, signer, bus, clock, auth_settings, normalize_email, throttle, issuer, rotation
    )
    with pytest.raises(InvalidCredentials):
        await service.login("ghost@example.com", PASSWORD, "1.2.3.4")
    assert spy.verifies == [True]


async def test_login_with_overlong_password_is_invalid_credentials(service: AuthService) -> None:
    await service.register("erin@example.com", PASSWORD)
    with pytest.raises(InvalidCredentials):
        await service.login("erin@example.com", "x" * 100, "1.2.3.4")


async def test_failed_logins_are_throttled_per_email_and_address(
    service: AuthService, clock: FakeClock, auth_settings: Live[AuthSettings]
) -> None:
    await service.register("frank@example.com", PASSWORD)
    for _ in range(5):
        with pytest.raises(InvalidCredentials):
            await service.login("frank@example.com", "bad password", "6.6.6.6")
        clock.advance(10)
    with pytest.raises(RateLimited) as limited:
        await service.login("frank@example.com", PASSWORD, "6.6.6.6")  # even the right password
    # The first failure (50 s ago) leaves the 900 s window in 850 s.
    assert limited.value.retry_after == 850
    # Another address is not locked out; the real user still logs in.
    assert (await service.login("frank@example.com", PASSWORD, "7.7.7.7")).access_token
    clock.advance(851)
    assert (await service.login("frank@example.com", PASSWORD, "6.6.6.6")).access_token


async def test_of_a_burst_of_wrong_passwords_at_most_the_limit_is_checked(
    storage, hasher, signer, bus, clock, auth_settings
) -> None:
    """Count first, then check (docs/reference/mfa-and-passkeys.md): 30 wrong passwords at once.
    Before, each read the count, then awaited its bcrypt check (off the loop) before writing its
    failure, so all 30 were checked; now 5 are, and 25 are refused before any bcrypt check."""
    from adapters.email_address import normalize_email
    from adapters.persistence.memory import MemoryLoginAttempts
    from application.shared.throttle import LoginThrottle

    spy = CountingHasher(hasher)
    throttle = LoginThrottle(MemoryLoginAttempts(), clock, auth_settings)
    issuer, rotation = make_tokens(storage, signer, bus, clock, auth_settings)
    service = AuthService(
        storage, spy, signer, bus, clock, auth_settings, normalize_email, throttle, issuer, rotation
    )
    await service.register("burst@example.com", PASSWORD)
    results = await asyncio.gather(
        *(service.login("burst@example.com", "bad password", "6.6.6.6") for _ in range(30)),
        return_exceptions=True,
    )
    assert sum(isinstance(r, InvalidCredentials) for r in results) == 5
    assert sum(isinstance(r, RateLimited) for r in results) == 25
    assert len(spy.verifies) == 5


async def test_successful_login_resets_failure_count(service: AuthService) -> None:
    await service.register("gina@example.com", PASSWORD)
    for _ in range(4):
        with pytest.raises(InvalidCredentials):
            await service.login("gina@example.com", "bad password", "6.6.6.6")
    await service.login("gina@example.com", PASSWORD, "6.6.6.6")
    for _ in range(4):
        with pytest.raises(InvalidCredentials):
            await service.login("gina@example.com", "bad password", "6.6.6.6")
    assert (await service.login("gina@example.com", PASSWORD, "6.6.6.6")).access_token


# --- authenticate / profile ---------------------------------------------------------------


async def test_authenticate_returns_current_user(service: AuthService) -> None:
    user = await service.register("hank@example.com", PASSWORD)
    pair = await service.login("hank@example.com", PASSWORD, "1.2.3.4")
    caller = await service.authenticate(pair.access_token)
    assert caller.user == user
    profile = await service.profile(pair.access_token)
    assert profile.user == user
    assert profile.groups == []


async def test_authenticate_rejects_token_of_a_user_that_is_gone(
    service: AuthService, signer, auth_settings: Live[AuthSettings], clock: FakeClock
) -> None:
    cfg = auth_settings.current
    now = int(clock.now().timestamp())
    token = await signer.sign({"sub": "no-such-user", "iss": cfg.issuer, "aud": cfg.audience,
                               "iat": now, "exp": now + 60, "jti": "0123456789ab"})  # fmt: skip
    with pytest.raises(InvalidToken):
        await service.authenticate(token)


async def test_authenticate_rejects_expired_token_beyond_leeway(
    service: AuthService, clock: FakeClock
) -> None:
    await service.register("ivy@example.com", PASSWORD)
    pair = await service.login("ivy@example.com", PASSWORD, "1.2.3.4")
    clock.advance(900 + 29)
    await service.authenticate(pair.access_token)  # within the 30 s leeway
    clock.advance(2)
    with pytest.raises(InvalidToken):
        await service.authenticate(pair.access_token)


# --- refresh ------------------------------------------------------------------------------


async def _login(service: AuthService, email: str = "jack@example.com"):
    await service.register(email, PASSWORD)
    return await service.login(email, PASSWORD, "1.2.3.4")


async def test_refresh_rotates_one_time(service: AuthService) -> None:
    first = await _login(service)
    second = await service.refresh(first.refresh_token)
    assert second.refresh_token != first.refresh_token
    third = await service.refresh(second.refresh_token)
    assert third.access_token


async def test_reuse_revokes_the_whole_family_and_is_reported(
    service: AuthService, recorder: Recorder
) -> None:
    first = await _login(service)
    other_session = await service.login("jack@example.com", PASSWORD, "1.2.3.4")
    second = await service.refresh(first.refresh_token)
    with pytest.raises(InvalidRefreshToken):
        await service.refresh(first.refresh_token)  # the thief (or the holder) replays
    with pytest.raises(InvalidRefreshToken):
        await service.refresh(second.refresh_token)  # the family's newest token is dead too
    [event] = recorder.of(RefreshTokenReuseDetected)
    assert event.revoked == 1
    assert event.token_hash_prefix == hash_refresh_token(first.refresh_token)[:8]
    assert first.refresh_token not in repr(event)
    # Another session of the same user is untouched.
    assert (await service.refresh(other_session.refresh_token)).access_token


async def test_refresh_unknown_and_expired_tokens_fail(
    service: AuthService, clock: FakeClock
) -> None:
    with pytest.raises(InvalidRefreshToken):
        await service.refresh("not-a-token")
    pair = await _login(service)
    clock.advance(2_592_000)
    with pytest.raises(InvalidRefreshToken):
        await service.refresh(pair.refresh_token)


async def test_rotation_never_extends_the_session_past_its_absolute_lifetime(
    service: AuthService, clock: FakeClock, auth_settings: Live[AuthSettings]
) -> None:
    auth_settings.replace(attrs.evolve(auth_settings.current, refresh_token_ttl=60,
                                       session_max_age=100))  # fmt: skip
    pair = await _login(service)
    clock.advance(50)
    pair = await service.refresh(pair.refresh_token)
    assert pair.refresh_expires_in == 50  # capped at login + 100 s, not now + 60 s
    clock.advance(49)
    pair = await service.refresh(pair.refresh_token)
    assert pair.refresh_expires_in == 1
    clock.advance(1)
    with pytest.raises(InvalidRefreshToken):
        await service.refresh(pair.refresh_token)


async def test_concurrent_refreshes_with_one_token_have_one_winner(service: AuthService) -> None:
    pair = await _login(service)
    results = await asyncio.gather(
        *(service.refresh(pair.refresh_token) for _ in range(20)), return_exceptions=True
    )
    winners = [r for r in results if not isinstance(r, BaseException)]
    assert len(winners) == 1
    assert all(isinstance(r, InvalidRefreshToken) for r in results if r not in winners)


async def test_refreshed_token_reflects_role_change(
    service: AuthService, storage: MemoryStorage
) -> None:
    pair = await _login(service)
    async with storage.begin() as uow:
        user = await uow.users.get_by_email("jack@example.com")
        assert user is not None
        await uow.users.update(attrs.evolve(user, role=Role.OPERATOR))
        await uow.commit()
    refreshed = await service.refresh(pair.refresh_token)
    claims = jwt.decode(refreshed.access_token, options={"verify_signature": False})
    assert claims["role"] == "operator"


async def test_logout_revokes_only_that_session(service: AuthService) -> None:
    one = await _login(service)
    two = await service.login("jack@example.com", PASSWORD, "1.2.3.4")
    rotated = await service.refresh(one.refresh_token)
    await service.logout(one.refresh_token)  # a rotated token still names its session
    with pytest.raises(InvalidRefreshToken):
        await service.refresh(rotated.refresh_token)
    assert (await service.refresh(two.refresh_token)).access_token
    await service.logout("unknown-token")  # no error


# --- password change ----------------------------------------------------------------------


async def test_change_password_wrong_old_changes_nothing(service: AuthService) -> None:
    pair = await _login(service)
    user = (await service.authenticate(pair.access_token)).user
    with pytest.raises(InvalidOldPassword):
        await service.change_password(user.id, "wrong old password", "new password 123", CLIENT)
    assert (await service.refresh(pair.refresh_token)).access_token
    assert await service.login("jack@example.com", PASSWORD, "1.2.3.4")


async def test_change_password_revokes_every_refresh_token(
    service: AuthService, recorder: Recorder
) -> None:
    one = await _login(service)
    two = await service.login("jack@example.com", PASSWORD, "1.2.3.4")
    user = (await service.authenticate(one.access_token)).user
    await service.change_password(user.id, PASSWORD, "new password 123", CLIENT)
    for token in (one.refresh_token, two.refresh_token):
        with pytest.raises(InvalidRefreshToken):
            await service.refresh(token)
    with pytest.raises(InvalidCredentials):
        await service.login("jack@example.com", PASSWORD, "1.2.3.4")
    assert await service.login("jack@example.com", "new password 123", "1.2.3.4")
    assert recorder.of(PasswordChanged) == [PasswordChanged(user_id=user.id, revoked=2)]


async def test_change_password_policy_checked_first(service: AuthService) -> None:
    pair = await _login(service)
    user = (await service.authenticate(pair.access_token)).user
    with pytest.raises(ValidationFailed) as info:
        await service.change_password(user.id, PASSWORD, "short", CLIENT)
    assert info.value.errors[0].field == "new_password"
    assert (await service.refresh(pair.refresh_token)).access_token
