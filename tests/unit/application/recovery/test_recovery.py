"""Email verification and password reset use cases (docs/reference/accounts.md) over the in-memory
adapters, a fake clock and a sender that keeps what it is given."""

from __future__ import annotations

import asyncio
import re

import attrs
import pytest

from adapters.crypto.bcrypt_hasher import BcryptHasher
from adapters.crypto.jwt_signer import JwtSigner
from adapters.email_address import normalize_email
from adapters.events.inprocess import InProcessEventBus
from adapters.mail.writer import TemplateMailWriter
from adapters.persistence.memory import MemoryLoginAttempts, MemoryStorage
from application.events.catalog import (
    EmailSent,
    EmailVerified,
    PasswordReset,
    PasswordResetRequested,
    SessionEnded,
)
from application.login.auth import AuthService
from application.ports import EmailMessage, EmailSender
from application.recovery.email_links import EmailVerification, PasswordRecovery
from application.recovery.mail import Outbox
from application.shared.settings import AuthSettings, EmailSettings, Live
from application.shared.throttle import LoginThrottle
from domain.errors import (
    EmailNotVerified,
    InvalidRefreshToken,
    InvalidResetToken,
    InvalidVerificationToken,
    RateLimited,
    ValidationFailed,
)
from tests.factories import make_tokens
from tests.fakes import FakeClock, Recorder

CLIENT = "192.0.2.7"
PASSWORD = "correct horse"
NEW_PASSWORD = "battery staple"


class KeepingSender(EmailSender):
    """Keeps every message it is asked to send."""

    def __init__(self) -> None:
        self.sent: list[EmailMessage] = []

    async def send(self, message: EmailMessage) -> None:
        self.sent.append(message)

    def tokens(self, kind: str) -> list[str]:
        return [re.search(r"token=([\w-]+)", m.link).group(1) for m in self.sent if m.kind == kind]  # type: ignore[union-attr]


@attrs.define
class World:
    auth: AuthService
    verification: EmailVerification
    recovery: PasswordRecovery
    outbox: Outbox
    sender: KeepingSender
    storage: MemoryStorage
    clock: FakeClock
    settings: Live[AuthSettings]
    email: Live[EmailSettings]

    async def settle(self) -> None:
        """Let the outbox send what was posted."""
        await self.outbox.drain(5)


@pytest.fixture
def world(
    storage: MemoryStorage,
    hasher: BcryptHasher,
    signer: JwtSigner,
    bus: InProcessEventBus,
    clock: FakeClock,
    auth_settings: Live[AuthSettings],
) -> World:
    email = Live(EmailSettings())
    sender = KeepingSender()
    outbox = Outbox(
        sender, bus, email, TemplateMailWriter(lambda: "", lambda: ("en",), lambda: "en")
    )
    throttle = LoginThrottle(MemoryLoginAttempts(), clock, auth_settings)
    verification = EmailVerification(storage, outbox, clock, auth_settings, email, bus, throttle)
    recovery = PasswordRecovery(
        storage, outbox, clock, auth_settings, email, bus, throttle, hasher, normalize_email
    )
    issuer, rotation = make_tokens(storage, signer, bus, clock, auth_settings)
    auth = AuthService(
        storage, hasher, signer, bus, clock, auth_settings, normalize_email, throttle, issuer,
        rotation, verification,
    )  # fmt: skip
    return World(auth, verification, recovery, outbox, sender, storage, clock, auth_settings, email)


async def _registered(world: World, email: str = "alice@example.com") -> str:
    user = await world.auth.register(email, PASSWORD)
    await world.settle()
    return user.id


async def test_registration_sends_a_verification_link_that_verifies_once(
    world: World, recorder: Recorder
) -> None:
    user_id = await _registered(world)
    [message] = world.sender.sent
    assert (message.kind, message.to) == ("verify", "alice@example.com")
    assert message.subject == EmailSettings().verify_subject
    [token] = world.sender.tokens("verify")
    assert message.link == f"http://localhost:8080/ui/verify?token={token}"
    assert message.link in message.text and message.link in message.html
    await world.verification.verify(token)
    async with world.storage.begin() as uow:
        user = await uow.users.get(user_id)
    assert user is not None and user.email_verified
    assert recorder.of(EmailVerified) == [EmailVerified(user_id=user_id)]
    with pytest.raises(InvalidVerificationToken):
        await world.verification.verify(token)


async def test_an_expired_verification_link_changes_nothing(world: World) -> None:
    user_id = await _registered(world)
    [token] = world.sender.tokens("verify")
    world.clock.advance(world.settings.current.email_verification_ttl)
    with pytest.raises(InvalidVerificationToken):
        await world.verification.verify(token)
    async with world.storage.begin() as uow:
        user = await uow.users.get(user_id)
    assert user is not None and not user.email_verified


async def test_resend_voids_the_older_link_and_is_throttled(world: World) -> None:
    user_id = await _registered(world)
    async with world.storage.begin() as uow:
        user = await uow.users.get(user_id)
    assert user is not None
    await world.verification.resend(user, CLIENT)
    await world.settle()
    first, second = world.sender.tokens("verify")
    with pytest.raises(InvalidVerificationToken):
        await world.verification.verify(first)
    for _ in range(world.settings.current.login_max_failures - 1):
        await world.verification.resend(user, CLIENT)
    with pytest.raises(RateLimited):
        await world.verification.resend(user, CLIENT)
    await world.settle()
    assert len(world.sender.tokens("verify")) == world.settings.current.login_max_failures + 1
    await world.verification.resend(user, "198.51.100.1")  # another address is not throttled
    del second


async def test_a_verified_user_gets_no_new_link(world: World) -> None:
    user_id = await _registered(world)
    await world.verification.verify(world.sender.tokens("verify")[0])
    async with world.storage.begin() as uow:
        user = await uow.users.get(user_id)
    assert user is not None
    await world.verification.resend(user, CLIENT)
    await world.settle()
    assert len(world.sender.sent) == 1


async def test_forgot_for_a_known_email_sends_a_reset_link_and_for_an_unknown_one_nothing(
    world: World, recorder: Recorder
) -> None:
    user_id = await _registered(world)
    await world.recovery.forgot("Alice@Example.com", CLIENT)
    await world.recovery.forgot("nobody@example.com", CLIENT)
    await world.settle()
    [message] = [m for m in world.sender.sent if m.kind == "reset"]
    assert message.to == "alice@example.com"
    assert message.link.startswith("http://localhost:8080/ui/reset?token=")
    assert recorder.of(PasswordResetRequested) == [
        PasswordResetRequested(user_id=user_id, client=CLIENT),
        PasswordResetRequested(user_id=None, client=CLIENT),
    ]


async def test_forgot_for_a_disabled_account_sends_nothing(world: World) -> None:
    user_id = await _registered(world)
    async with world.storage.begin() as uow:
        user = await uow.users.get(user_id)
        assert user is not None
        await uow.users.update(attrs.evolve(user, disabled=True))
        await uow.commit()
    await world.recovery.forgot("alice@example.com", CLIENT)
    await world.settle()
    assert world.sender.tokens("reset") == []


async def test_forgot_is_throttled_per_email_and_address(world: World) -> None:
    await _registered(world)
    limit = world.settings.current.login_max_failures
    for _ in range(limit):
        await world.recovery.forgot("nobody@example.com", CLIENT)
    with pytest.raises(RateLimited) as caught:
        await world.recovery.forgot("nobody@example.com", CLIENT)
    assert caught.value.retry_after >= 1
    await world.recovery.forgot("alice@example.com", CLIENT)  # another email: its own count
    with pytest.raises(ValidationFailed):
        await world.recovery.forgot("not an email", CLIENT)


async def test_reset_sets_the_password_ends_every_session_and_verifies_the_email(
    world: World, recorder: Recorder
) -> None:
    user_id = await _registered(world)
    pair = await world.auth.login("alice@example.com", PASSWORD, CLIENT)
    await world.recovery.forgot("alice@example.com", CLIENT)
    await world.settle()
    [token] = world.sender.tokens("reset")
    await world.recovery.reset(token, NEW_PASSWORD)
    with pytest.raises(InvalidRefreshToken):
        await world.auth.refresh(pair.refresh_token)
    await world.auth.login("alice@example.com", NEW_PASSWORD, CLIENT)
    async with world.storage.begin() as uow:
        user = await uow.users.get(user_id)
    assert user is not None and user.email_verified
    [reset] = recorder.of(PasswordReset)
    assert reset == PasswordReset(user_id=user_id, revoked=1)
    assert [e.reason for e in recorder.of(SessionEnded)] == ["password_reset"]
    with pytest.raises(InvalidResetToken):
        await world.recovery.reset(token, "yet another one")


async def test_a_newer_request_voids_the_older_link(world: World) -> None:
    await _registered(world)
    await world.recovery.forgot("alice@example.com", CLIENT)
    await world.recovery.forgot("alice@example.com", CLIENT)
    await world.settle()
    older, newer = world.sender.tokens("reset")
    with pytest.raises(InvalidResetToken):
        await world.recovery.reset(older, NEW_PASSWORD)
    await world.recovery.reset(newer, NEW_PASSWORD)


async def test_a_refused_reset_changes_nothing(world: World) -> None:
    await _registered(world)
    await world.recovery.forgot("alice@example.com", CLIENT)
    await world.settle()
    [token] = world.sender.tokens("reset")
    with pytest.raises(ValidationFailed):
        await world.recovery.reset(token, "short")  # the policy: checked first
    world.clock.advance(world.settings.current.password_reset_ttl)
    with pytest.raises(InvalidResetToken):
        await world.recovery.reset(token, NEW_PASSWORD)  # expired
    await world.auth.login("alice@example.com", PASSWORD, CLIENT)  # the old password still works
    with pytest.raises(InvalidResetToken):
        await world.recovery.reset("a" * 43, NEW_PASSWORD)


async def test_concurrent_resets_with_one_link_have_one_winner(world: World) -> None:
    await _registered(world)
    await world.recovery.forgot("alice@example.com", CLIENT)
    await world.settle()
    [token] = world.sender.tokens("reset")
    results = await asyncio.gather(
        *(world.recovery.reset(token, f"new password {i}") for i in range(3)),
        return_exceptions=True,
    )
    assert sorted(type(r).__name__ for r in results) == [
        "InvalidResetToken",
        "InvalidResetToken",
        "NoneType",
    ]


async def test_login_requires_a_verified_email_when_configured(world: World) -> None:
    await _registered(world)
    world.settings.replace(attrs.evolve(world.settings.current, require_verified_email=True))
    with pytest.raises(EmailNotVerified):
        await world.auth.login("alice@example.com", PASSWORD, CLIENT)
    await world.verification.verify(world.sender.tokens("verify")[0])
    await world.auth.login("alice@example.com", PASSWORD, CLIENT)


async def test_with_backend_none_nothing_is_sent(world: World, recorder: Recorder) -> None:
    world.email.replace(EmailSettings(backend="none"))
    await _registered(world)
    await world.recovery.forgot("alice@example.com", CLIENT)
    await world.settle()
    assert world.sender.sent == []
    assert [e.outcome for e in recorder.of(EmailSent)] == ["skipped"]


async def test_no_event_carries_a_token_or_an_email(world: World, recorder: Recorder) -> None:
    await _registered(world)
    await world.recovery.forgot("alice@example.com", CLIENT)
    await world.settle()
    tokens = world.sender.tokens("verify") + world.sender.tokens("reset")
    await world.verification.verify(tokens[0])
    await world.recovery.reset(tokens[1], NEW_PASSWORD)
    shown = " ".join(repr(e) for e in recorder.events)
    assert recorder.of(EmailSent) and recorder.of(PasswordReset)
    for secret in (*tokens, "alice@example.com", PASSWORD, NEW_PASSWORD):
        assert secret not in shown
