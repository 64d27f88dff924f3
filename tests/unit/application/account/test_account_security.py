"""The account pages' use-case logic (docs/reference/accounts.md, "The account page: security"),
over the container's wiring with memory storage and a fixed clock: the fresh-login rule
(``HostedAccount``, ``domain.policy.login_is_recent``), a ``RecentLogin`` as a fresh proof,
the password change that keeps one session, new recovery codes, and the email change."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyotp
import pytest

from application.events.catalog import EmailChanged, RecoveryCodesRegenerated
from application.events.federation import IdentityUnlinked
from application.ports import MailDraft
from application.sessions.hosted import hosted_session_hash
from application.shared.reauth import FreshProof, RecentLogin
from application.shared.steps import hash_token
from domain import policy
from domain.errors import (
    Conflict,
    EmailTaken,
    InvalidOldPassword,
    InvalidVerificationToken,
    RateLimited,
    ReauthenticationRequired,
    ValidationFailed,
)
from domain.federation import FederatedIdentity
from domain.model import EmailToken, EmailTokenPurpose
from entrypoints.config import Config
from entrypoints.http.pages.settings import UiSettings
from tests.unit.application.harness import ADDRESS, PASSWORD, Harness, build_harness

WINDOW = 300


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    return build_harness(tmp_path, auth={"login_max_failures": 3})


def test_login_is_recent_up_to_the_window_inclusive() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    assert policy.login_is_recent(at, at + timedelta(seconds=WINDOW), WINDOW)
    assert not policy.login_is_recent(at, at + timedelta(seconds=WINDOW + 1), WINDOW)
    assert policy.login_is_recent(at, at, WINDOW)


@pytest.mark.parametrize("window", [29, 86_401, -1])
def test_the_window_is_refused_out_of_its_range(window: int) -> None:
    with pytest.raises(ValueError, match="reauthentication_window"):
        UiSettings(reauthentication_window=window)
    assert Config().ui.reauthentication_window == WINDOW


async def test_a_visit_is_recent_within_the_window_then_stale(harness: Harness) -> None:
    user = await harness.add_user()
    cookie = await harness.sign_in(user)
    account = harness.container.hosted_account()
    visit = await account.visit(cookie)
    assert visit is not None and visit.user.id == user.id
    assert visit.recent == RecentLogin(
        user.id, visit.hosted.session_id, hosted_session_hash(cookie)
    )
    harness.clock.advance(WINDOW + 1)
    stale = await account.visit(cookie)
    assert stale is not None and stale.recent is None
    assert await account.visit(None) is None and await account.visit("x" * 43) is None


async def test_reauthentication_refreshes_the_login_and_counts_wrong_passwords(
    harness: Harness,
) -> None:
    user = await harness.add_user()
    cookie = await harness.sign_in(user)
    harness.clock.advance(WINDOW + 1)
    account = harness.container.hosted_account()
    for _ in range(2):
        with pytest.raises(ReauthenticationRequired):
            await account.reauthenticate(cookie, FreshProof(password="wrong"), ADDRESS)
    with pytest.raises(ReauthenticationRequired):  # a recent login is no proof here
        recent = RecentLogin(user.id, "s", "h")
        await account.reauthenticate(cookie, FreshProof(recent_login=recent), ADDRESS)
    assert await account.reauthenticate(cookie, FreshProof(password=PASSWORD), ADDRESS)
    visit = await account.visit(cookie)
    assert visit is not None and visit.recent is not None
    assert visit.hosted.auth_time == harness.clock.now()
    assert not await account.reauthenticate(None, FreshProof(password=PASSWORD), ADDRESS)
    for _ in range(3):  # the success forgot the two failures: three more reach the limit
        with pytest.raises(ReauthenticationRequired):
            await account.reauthenticate(cookie, FreshProof(password="wrong"), ADDRESS)
    with pytest.raises(RateLimited):
        await account.reauthenticate(cookie, FreshProof(password=PASSWORD), ADDRESS)


async def test_a_recent_login_proves_its_own_user_only(harness: Harness) -> None:
    alice = await harness.add_user()
    bob = await harness.add_user("bob@example.com")
    enrolment = harness.container.mfa_enrolment()
    with pytest.raises(ReauthenticationRequired):
        await enrolment.start(bob.id, FreshProof(recent_login=RecentLogin(alice.id, "s", "h")),
                              ADDRESS)  # fmt: skip
    started = await enrolment.start(alice.id, FreshProof(recent_login=RecentLogin(alice.id, "s",
                                                                                  "h")), ADDRESS)  # fmt: skip
    assert started.secret


async def test_the_password_change_can_keep_one_session(harness: Harness) -> None:
    user = await harness.add_user()
    cookie = await harness.sign_in(user)
    await harness.container.auth_service().login(user.email, PASSWORD, ADDRESS)
    visit = await harness.container.hosted_account().visit(cookie)
    assert visit is not None
    await harness.container.auth_service().change_password(
        user.id, PASSWORD, "a brand new passphrase", ADDRESS, keep_session=visit.hosted.session_id
    )
    async with harness.storage.read() as uow:
        live = await uow.sessions.list_live(user.id, harness.clock.now())
    assert [s.id for s in live] == [visit.hosted.session_id]
    assert await harness.container.hosted_account().visit(cookie) is not None


async def test_new_recovery_codes_replace_the_old_ones_and_need_mfa_on(harness: Harness) -> None:
    user = await harness.add_user()
    enrolment = harness.container.mfa_enrolment()
    proof = FreshProof(recent_login=RecentLogin(user.id, "s", "h"))
    with pytest.raises(Conflict):
        await enrolment.regenerate_recovery_codes(user.id, proof, ADDRESS)
    started = await enrolment.start(user.id, proof, ADDRESS)
    code = pyotp.TOTP(started.secret).at(harness.clock.now().timestamp())
    first = await enrolment.confirm(user.id, code)
    with pytest.raises(ReauthenticationRequired):
        await enrolment.regenerate_recovery_codes(user.id, FreshProof(password="wrong"), ADDRESS)
    second = await enrolment.regenerate_recovery_codes(user.id, proof, ADDRESS)
    assert len(second) == 10 and not set(first) & set(second)
    async with harness.storage.begin() as uow:
        assert not await uow.mfa.use_recovery_code(user.id, hash_token(first[0].replace("-", "")))
        assert await uow.mfa.recovery_codes_left(user.id) == 10
    assert harness.recorder.of(RecoveryCodesRegenerated) == [RecoveryCodesRegenerated(user.id)]


async def _change_token(harness: Harness, user_id: str, new_email: str) -> str:
    """Store an email-change token of ``user_id`` to ``new_email``: its clear value."""
    clear = "clear-change-token"
    now = harness.clock.now()
    token = EmailToken(hash_token(clear), user_id, EmailTokenPurpose.EMAIL_CHANGE,
                       now + timedelta(hours=1), now, new_email=new_email)  # fmt: skip
    async with harness.storage.begin() as uow:
        await uow.email_tokens.add(token)
        await uow.commit()
    return clear


async def test_an_email_change_request_checks_the_address_then_the_password(
    harness: Harness,
) -> None:
    user = await harness.add_user()
    change = harness.container.email_change()
    for bad in ("not an address", "ALICE@example.com"):
        with pytest.raises(ValidationFailed) as caught:
            await change.request(user.id, bad, PASSWORD, ADDRESS)
        assert caught.value.errors[0].field == "new_email"
    with pytest.raises(InvalidOldPassword):
        await change.request(user.id, "alice@new.example", "wrong", ADDRESS)
    sent: list[MailDraft] = []
    harness.container.outbox().post = lambda message, _user_id: sent.append(message)  # type: ignore[method-assign]
    await change.request(user.id, "Alice@New.example", PASSWORD, ADDRESS, "de")
    assert [(m.kind, m.to, m.locale) for m in sent] == [("email_change", "alice@new.example", "de")]
    clear = sent[0].link.rsplit("token=", 1)[1]
    await change.confirm(clear, "de")
    assert [(m.kind, m.to, m.locale) for m in sent[1:]] == [
        ("email_changed", "alice@example.com", "de")
    ]
    assert sent[1].values["new_email"] == "alice@new.example"


async def test_an_email_change_confirms_once_and_never_onto_a_taken_address(
    harness: Harness,
) -> None:
    user = await harness.add_user(email_verified=False)
    await harness.add_user("bob@example.com")
    change = harness.container.email_change()
    taken = await _change_token(harness, user.id, "bob@example.com")
    with pytest.raises(EmailTaken):
        await change.confirm(taken)
    async with harness.storage.begin() as uow:
        await uow.email_tokens.void(user.id, EmailTokenPurpose.EMAIL_CHANGE)
        await uow.commit()
    clear = await _change_token(harness, user.id, "alice@new.example")
    await harness.update_user(user, disabled=True)
    with pytest.raises(InvalidVerificationToken):
        await change.confirm(clear)
    await harness.update_user(user, disabled=False)
    await change.confirm(clear)
    async with harness.storage.read() as uow:
        moved = await uow.users.get(user.id)
    assert moved is not None and (moved.email, moved.email_verified) == ("alice@new.example", True)
    assert harness.recorder.of(EmailChanged) == [EmailChanged(user.id)]
    with pytest.raises(InvalidVerificationToken):
        await change.confirm(clear)
    late = await _change_token(harness, user.id, "alice@third.example")
    harness.clock.advance(3600)  # its expiry
    with pytest.raises(InvalidVerificationToken):
        await change.confirm(late)


async def test_a_first_proven_address_drops_the_identities_linked_before(harness: Harness) -> None:
    """As a verification link does (docs/reference/federation.md): an identity linked while the
    email was unverified goes when the change proves an address for the first time."""
    user = await harness.add_user(email_verified=False)
    linked = FederatedIdentity("https://idp.example", "sub-1", "idp", user.id, None,
                               harness.clock.now())  # fmt: skip
    async with harness.storage.begin() as uow:
        await uow.identities.add(linked)
        await uow.commit()
    await harness.container.email_change().confirm(
        await _change_token(harness, user.id, "alice@new.example")
    )
    async with harness.storage.read() as uow:
        assert await uow.identities.list_for_user(user.id) == []
    assert [e.provider for e in harness.recorder.of(IdentityUnlinked)] == ["idp"]
