"""Use cases of sessions and the user lifecycle (docs/reference/tokens-and-sessions.md and
docs/reference/accounts.md) on the in-memory adapters: the reuse interval, session records, disable
/ enable / delete, and their events."""

from __future__ import annotations

from datetime import timedelta

import attrs
import pytest

from adapters.events.inprocess import InProcessEventBus
from adapters.persistence.memory import MemoryStorage
from application.accounts.lifecycle import DeleteOwnAccount, DeleteUser, UpdateUser
from application.events.catalog import (
    LoginFailed,
    PasswordChanged,
    RefreshTokenReuseDetected,
    SessionEnded,
    UserDeleted,
    UserDisabled,
    UserEnabled,
)
from application.login.auth import AuthService
from application.sessions.manage import (
    EndOtherSessions,
    EndOwnSession,
    EndOwnSessions,
    ListedSession,
    ListSessions,
)
from application.shared.reauth import Reauthentication
from application.shared.settings import AuthSettings, Live
from domain.clients import Client
from domain.errors import (
    AccountDisabled,
    Forbidden,
    InvalidCredentials,
    InvalidOldPassword,
    InvalidRefreshToken,
    InvalidToken,
    LastSuperadmin,
    NotFound,
    ValidationFailed,
)
from domain.model import RefreshToken, Role, Session, User
from domain.policy import CLI_OPERATOR, Principal
from tests.fakes import FakeClock, Recorder

PASSWORD = "correct horse battery"
CLIENT = "192.0.2.7"


async def _user(service: AuthService, storage: MemoryStorage, email: str, role: Role) -> User:
    user = await service.register(email, PASSWORD)
    async with storage.begin() as uow:
        await uow.users.update(attrs.evolve(user, role=role))
        await uow.commit()
    return attrs.evolve(user, role=role)


def _me(user: User) -> Principal:
    return Principal.of(user)


def _reuse(settings: Live[AuthSettings], interval: int, cap: int = 2) -> None:
    settings.replace(
        attrs.evolve(settings.current, refresh_reuse_interval=interval, refresh_reuse_max=cap)
    )


# --------------------------------------------------------------------------- reuse interval


async def test_without_a_reuse_interval_a_second_presentation_revokes_the_session(
    service: AuthService, recorder: Recorder
) -> None:
    await service.register("a@example.com", PASSWORD)
    first = await service.login("a@example.com", PASSWORD, "10.0.0.1")
    second = await service.refresh(first.refresh_token)
    with pytest.raises(InvalidRefreshToken):
        await service.refresh(first.refresh_token)
    with pytest.raises(InvalidRefreshToken):
        await service.refresh(second.refresh_token)  # the family went with it
    assert [e.reason for e in recorder.of(SessionEnded)] == ["reuse"]


async def test_inside_the_interval_a_rotated_token_rotates_again_up_to_the_cap(
    service: AuthService, auth_settings: Live[AuthSettings], clock: FakeClock, recorder: Recorder
) -> None:
    _reuse(auth_settings, interval=10, cap=2)
    await service.register("a@example.com", PASSWORD)
    login = await service.login("a@example.com", PASSWORD, "10.0.0.1")
    first = await service.refresh(login.refresh_token)
    clock.advance(5)
    again = [await service.refresh(login.refresh_token) for _ in range(2)]  # two tabs
    assert len({p.refresh_token for p in [first, *again]}) == 3
    with pytest.raises(InvalidRefreshToken):  # a fourth presentation is reuse
        await service.refresh(login.refresh_token)
    for pair in [first, *again]:
        with pytest.raises(InvalidRefreshToken):
            await service.refresh(pair.refresh_token)
    assert len(recorder.of(RefreshTokenReuseDetected)) == 1


async def test_after_the_interval_a_rotated_token_is_reuse_as_before(
    service: AuthService, auth_settings: Live[AuthSettings], clock: FakeClock
) -> None:
    _reuse(auth_settings, interval=10)
    await service.register("a@example.com", PASSWORD)
    login = await service.login("a@example.com", PASSWORD, "10.0.0.1")
    current = await service.refresh(login.refresh_token)
    clock.advance(10.001)
    with pytest.raises(InvalidRefreshToken):
        await service.refresh(login.refresh_token)
    with pytest.raises(InvalidRefreshToken):
        await service.refresh(current.refresh_token)


async def test_the_interval_never_revives_an_ended_session(
    service: AuthService, auth_settings: Live[AuthSettings]
) -> None:
    _reuse(auth_settings, interval=10)
    await service.register("a@example.com", PASSWORD)
    login = await service.login("a@example.com", PASSWORD, "10.0.0.1")
    current = await service.refresh(login.refresh_token)
    await service.logout(current.refresh_token)
    with pytest.raises(InvalidRefreshToken):
        await service.refresh(login.refresh_token)


# --------------------------------------------------------------------------- session records


async def test_login_records_the_user_agent_cut_to_256_and_the_client_address(
    service: AuthService, storage: MemoryStorage, clock: FakeClock
) -> None:
    user = await service.register("a@example.com", PASSWORD)
    login = await service.login("a@example.com", PASSWORD, "192.0.2.1", "x" * 300)
    clock.advance(60)
    await service.refresh(login.refresh_token)
    sessions = await ListSessions(storage, clock)(_me(user))
    assert len(sessions) == 1
    session = sessions[0].session
    assert sessions[0].client_name is None
    assert session.user_agent == "x" * 256 and session.client_address == "192.0.2.1"
    assert (session.last_used_at - session.created_at).total_seconds() == 60


async def test_a_user_ends_one_of_its_sessions_and_not_someone_elses(
    service: AuthService, storage: MemoryStorage, bus: InProcessEventBus, clock: FakeClock
) -> None:
    alice = await service.register("a@example.com", PASSWORD)
    bob = await service.register("b@example.com", PASSWORD)
    phone = await service.login("a@example.com", PASSWORD, "10.0.0.1", "phone")
    clock.advance(1)
    laptop = await service.login("a@example.com", PASSWORD, "10.0.0.2", "laptop")
    listed = await ListSessions(storage, clock)(_me(alice))
    assert [s.session.user_agent for s in listed] == ["laptop", "phone"]  # newest first
    with pytest.raises(NotFound):
        await EndOwnSession(storage, bus, FakeClock())(_me(bob), listed[1].session.id)
    await EndOwnSession(storage, bus, FakeClock())(_me(alice), listed[1].session.id)
    with pytest.raises(InvalidRefreshToken):
        await service.refresh(phone.refresh_token)
    await service.refresh(laptop.refresh_token)
    assert await EndOwnSessions(storage, bus, FakeClock())(_me(alice)) == [listed[0].session.id]
    assert await ListSessions(storage, clock)(_me(alice)) == []


async def test_ending_the_other_sessions_keeps_the_one_named_and_audits_each_ended(
    service: AuthService, storage: MemoryStorage, bus: InProcessEventBus, clock: FakeClock,
    recorder: Recorder,
) -> None:  # fmt: skip
    alice = await service.register("a@example.com", PASSWORD)
    bob = await service.register("b@example.com", PASSWORD)
    phone = await service.login("a@example.com", PASSWORD, "10.0.0.1", "phone")
    tablet = await service.login("a@example.com", PASSWORD, "10.0.0.3", "tablet")
    laptop = await service.login("a@example.com", PASSWORD, "10.0.0.2", "laptop")
    bobs = await service.login("b@example.com", PASSWORD, "10.0.0.4", "bob")
    listed = await ListSessions(storage, clock)(_me(alice))
    keep = next(s.session.id for s in listed if s.session.user_agent == "laptop")
    others = sorted(s.session.id for s in listed if s.session.id != keep)
    assert await EndOtherSessions(storage, bus, clock)(_me(alice), keep) == others
    assert [s.session.id for s in await ListSessions(storage, clock)(_me(alice))] == [keep]
    for ended in (phone, tablet):
        with pytest.raises(InvalidRefreshToken):
            await service.refresh(ended.refresh_token)
    await service.refresh(laptop.refresh_token)
    await service.refresh(bobs.refresh_token)  # another user's sessions are untouched
    assert len(await ListSessions(storage, clock)(_me(bob))) == 1
    ends = recorder.of(SessionEnded)
    assert sorted(e.session_id for e in ends) == others
    assert {(e.reason, e.user_id) for e in ends} == {("user", alice.id)}
    assert await EndOtherSessions(storage, bus, clock)(_me(alice), keep) == []


async def test_password_change_ends_every_session_with_reason_password(
    service: AuthService, recorder: Recorder
) -> None:
    user = await service.register("a@example.com", PASSWORD)
    for _ in range(2):
        await service.login("a@example.com", PASSWORD, "10.0.0.1")
    await service.change_password(user.id, PASSWORD, "another good password", CLIENT)
    assert recorder.of(PasswordChanged)[0].revoked == 2
    assert [e.reason for e in recorder.of(SessionEnded)] == ["password", "password"]


# --------------------------------------------------------------------------- lifecycle


async def test_disable_ends_sessions_refuses_login_and_bearer_then_enable_restores(
    service: AuthService, storage: MemoryStorage, bus: InProcessEventBus, recorder: Recorder
) -> None:
    root = await _user(service, storage, "root@example.com", Role.SUPERADMIN)
    user = await service.register("a@example.com", PASSWORD)
    pair = await service.login("a@example.com", PASSWORD, "10.0.0.1")
    update = UpdateUser(storage, bus, FakeClock())
    assert (await update(_me(root), user.id, disabled=True)).disabled
    with pytest.raises(InvalidRefreshToken):
        await service.refresh(pair.refresh_token)
    with pytest.raises(AccountDisabled):
        await service.login("a@example.com", PASSWORD, "10.0.0.1")
    with pytest.raises(InvalidCredentials):
        await service.login("a@example.com", "wrong password!", "10.0.0.1")
    with pytest.raises(InvalidToken):
        await service.authenticate(pair.access_token)
    with pytest.raises(InvalidToken):
        await service.profile(pair.access_token)
    assert recorder.of(UserDisabled) == [UserDisabled(user.id, root.id)]
    assert [e.reason for e in recorder.of(SessionEnded)] == ["disabled"]
    assert recorder.of(LoginFailed)[-2].reason == "account_disabled"
    assert not (await update(CLI_OPERATOR, user.id, disabled=False)).disabled
    assert recorder.of(UserEnabled) == [UserEnabled(user.id, "cli")]
    await service.login("a@example.com", PASSWORD, "10.0.0.1")


async def test_update_needs_a_field_and_refuses_an_org_admin_on_a_superadmin(
    service: AuthService, storage: MemoryStorage, bus: InProcessEventBus
) -> None:
    root = await _user(service, storage, "root@example.com", Role.SUPERADMIN)
    admin = await _user(service, storage, "admin@example.com", Role.ORG_ADMIN)
    update = UpdateUser(storage, bus, FakeClock())
    with pytest.raises(ValidationFailed):
        await update(_me(root), admin.id)
    with pytest.raises(Forbidden):
        await update(_me(admin), root.id, disabled=True)
    with pytest.raises(Forbidden):  # moving needs superadmin, even with disabled beside it
        await update(_me(admin), admin.id, disabled=False, org_id="elsewhere")
    async with storage.begin() as uow:
        assert (await uow.users.get(root.id)) == root


async def test_the_last_enabled_superadmin_can_be_neither_disabled_nor_deleted(
    service: AuthService, storage: MemoryStorage, bus: InProcessEventBus, reauth: Reauthentication
) -> None:
    root = await _user(service, storage, "root@example.com", Role.SUPERADMIN)
    with pytest.raises(LastSuperadmin):
        await UpdateUser(storage, bus, FakeClock())(CLI_OPERATOR, root.id, disabled=True)
    with pytest.raises(LastSuperadmin):
        await DeleteUser(storage, bus, FakeClock())(_me(root), root.id)
    with pytest.raises(LastSuperadmin):
        await DeleteOwnAccount(storage, bus, reauth, FakeClock())(root, PASSWORD, CLIENT)
    async with storage.begin() as uow:
        assert await uow.users.get(root.id) == root
    other = await _user(service, storage, "root2@example.com", Role.SUPERADMIN)
    await UpdateUser(storage, bus, FakeClock())(_me(other), root.id, disabled=True)
    with pytest.raises(LastSuperadmin):  # the disabled one does not count
        await DeleteUser(storage, bus, FakeClock())(CLI_OPERATOR, other.id)


async def test_delete_removes_the_user_and_frees_its_email(
    service: AuthService, storage: MemoryStorage, bus: InProcessEventBus, recorder: Recorder
) -> None:
    admin = await _user(service, storage, "admin@example.com", Role.ORG_ADMIN)
    user = await service.register("a@example.com", PASSWORD)
    pair = await service.login("a@example.com", PASSWORD, "10.0.0.1")
    await DeleteUser(storage, bus, FakeClock())(_me(admin), user.id)
    assert recorder.of(UserDeleted) == [UserDeleted(user.id, admin.id, user.org_id)]
    with pytest.raises(InvalidRefreshToken):
        await service.refresh(pair.refresh_token)
    await service.register("a@example.com", PASSWORD)


async def test_delete_own_account_needs_the_password(
    service: AuthService, storage: MemoryStorage, bus: InProcessEventBus, reauth: Reauthentication
) -> None:
    user = await service.register("a@example.com", PASSWORD)
    delete = DeleteOwnAccount(storage, bus, reauth, FakeClock())
    for wrong in ("not my password", "x" * 100):
        with pytest.raises(InvalidOldPassword):
            await delete(user, wrong, CLIENT)
    async with storage.begin() as uow:
        assert await uow.users.get(user.id) == user
    await delete(user, PASSWORD, CLIENT)
    async with storage.begin() as uow:
        assert await uow.users.get(user.id) is None


async def test_a_listed_session_names_the_client_that_started_it(
    service: AuthService, storage: MemoryStorage, clock: FakeClock
) -> None:
    """``ListedSession.client_name`` is the name of ``Session.client_id``'s client (
    docs/reference/oauth-and-oidc.md); None for a JSON-API session."""
    alice = await service.register("a@example.com", PASSWORD)
    await service.login("a@example.com", PASSWORD, "10.0.0.1", "api")
    now = clock.now()
    started = Session("oidc-1", alice.id, now + timedelta(seconds=1), now,
                      now + timedelta(days=1), "browser", None, "c" * 32)  # fmt: skip
    async with storage.begin() as uow:
        await uow.clients.add(
            Client("c" * 32, "Photo App", "org-a", ("openid",), (), False, False, now, "")
        )
        await uow.sessions.add(started)
        await uow.tokens.add(RefreshToken("h" * 64, alice.id, started.id,
                                          now + timedelta(hours=1), started.expires_at, now))  # fmt: skip
        await uow.commit()
    listed = await ListSessions(storage, clock)(_me(alice))
    assert [(s.session.client_id, s.client_name) for s in listed] == [
        ("c" * 32, "Photo App"),
        (None, None),
    ]
    assert listed[0] == ListedSession(started, "Photo App")
