"""application.shared.users, .groups and .operator over the in-memory adapters
(docs/reference/accounts.md).

The permission matrix is the one table of ``tests/unit/domain/test_policy.py``, driven here through the
real use cases; then escalation, pagination under concurrent inserts, moves, members, events
(published after the commit only) and the operator's CLI use cases.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from typing import Any

import attrs
import pytest

import application.shared.pagination as pagination
from adapters.crypto.bcrypt_hasher import BcryptHasher
from adapters.events.inprocess import InProcessEventBus
from adapters.persistence.memory import MemoryStorage
from application.accounts.groups import (
    AddMember,
    CreateGroup,
    DeleteGroup,
    GetGroup,
    ListGroups,
    RemoveMember,
    RenameGroup,
)
from application.accounts.lifecycle import DeleteUser, UpdateUser
from application.accounts.operator import CreateSuperadmin, OperatorCommand
from application.accounts.users import GetUser, ListUsers, SetRole
from application.audit.query import ListAuditEvents
from application.console.caller import ConsoleCaller
from application.console.dashboard import Dashboard
from application.events.catalog import (
    Event,
    GroupDeleted,
    GroupMembershipChanged,
    MfaDisabled,
    RoleChanged,
    UserMoved,
    UserRegistered,
)
from application.mfa.totp import ResetUserMfa
from application.oauth.clients import (
    CreateClient,
    DeleteClient,
    GetClient,
    ListClients,
    RotateClientSecret,
    UpdateClient,
)
from application.passkeys.registration import PasskeyAdmin
from application.sessions.manage import EndUserSessions, ListSessions
from application.shared.pagination import Page
from application.shared.settings import AuthSettings, Live, OAuthSettings
from application.shared.steps import new_id
from domain.audit import AuditEvent, new_audit_id
from domain.clients import Client
from domain.errors import (
    Conflict,
    FieldError,
    Forbidden,
    LastSuperadmin,
    NotFound,
    ValidationFailed,
)
from domain.model import Group, RefreshToken, Role, Session, User
from domain.passkeys import Passkey
from domain.policy import OPERATOR_ACTOR_ID, Operation, Principal
from tests.fakes import FakeClock
from tests.unit.domain.test_policy import CALLER_ORG, MATRIX, OTHER_ORG, matrix_id

THIRD_ORG = "initech"


# --------------------------------------------------------------------------- doubles


class SpyStorage:
    """Wraps a MemoryStorage and records open units and commits, to check that events are
    published after the commit and outside any unit; ``fail_commit`` makes ``commit()`` raise."""

    def __init__(self, inner: MemoryStorage) -> None:
        self.inner = inner
        self.open_units = 0
        self.commits = 0
        self.fail_commit = False

    @asynccontextmanager
    async def _begin(self) -> AsyncIterator[Any]:
        async with self.inner.begin() as uow:
            self.open_units += 1
            try:
                yield _SpyUnitOfWork(uow, self)
            finally:
                self.open_units -= 1

    def begin(self) -> Any:
        return self._begin()

    def read(self) -> Any:
        return self._begin()

    async def open(self) -> None:
        await self.inner.open()

    async def close(self) -> None:
        await self.inner.close()

    async def ping(self) -> None:
        await self.inner.ping()


class _SpyUnitOfWork:
    def __init__(self, uow: Any, spy: SpyStorage) -> None:
        self._inner = uow
        self.passkeys = uow.passkeys
        self._spy = spy
        self.users = uow.users
        self.tokens = uow.tokens
        self.sessions = uow.sessions
        self.groups = uow.groups
        self.email_tokens = uow.email_tokens
        self.mfa = uow.mfa
        self.audit = uow.audit
        self.clients = uow.clients

    async def commit(self) -> None:
        if self._spy.fail_commit:
            raise RuntimeError("disk full")
        await self._inner.commit()
        self._spy.commits += 1


def normalize_email(email: str) -> str:
    email = email.strip()
    if "@" not in email:
        raise ValidationFailed([FieldError("email", "is not an email address")])
    return email.lower()


class KeysOnly:
    """The signer's JWKS, for the dashboard."""

    def jwks(self) -> dict[str, Any]:
        return {"keys": [{"kid": "k1", "alg": "RS256", "kty": "RSA"}]}


class World:
    """One in-memory backend, a bus that records every event (and whether a unit was open when
    it was published), a fake clock, and every admin use case wired to them."""

    def __init__(self) -> None:
        self.spy = SpyStorage(MemoryStorage())
        self.bus = InProcessEventBus()
        self.clock = FakeClock()
        self.events: list[Event] = []
        self.published_inside_unit: list[Event] = []
        self.bus.subscribe(Event, self._record)
        self._seq = 0
        storage, bus, clock = self.spy, self.bus, self.clock
        self.list_users = ListUsers(storage)
        self.get_user = GetUser(storage)
        self.set_role = SetRole(storage, bus, clock)
        self.update_user = UpdateUser(storage, bus, clock)
        self.move_user = self.update_user.move
        self.delete_user = DeleteUser(storage, bus, clock)
        self.list_sessions = ListSessions(storage, self.clock)
        self.end_user_sessions = EndUserSessions(storage, bus, clock)
        self.reset_user_mfa = ResetUserMfa(storage, bus, clock)
        self.list_groups = ListGroups(storage)
        self.get_group = GetGroup(storage)
        self.create_group = CreateGroup(storage, bus, clock, self.next_id)
        self.rename_group = RenameGroup(storage, bus, clock)
        self.delete_group = DeleteGroup(storage, bus, clock)
        self.add_member = AddMember(storage, bus, clock)
        self.remove_member = RemoveMember(storage, bus, clock)
        self.list_audit_events = ListAuditEvents(storage)
        self.list_clients = ListClients(storage)
        self.passkey_admin = PasskeyAdmin(storage, bus, clock)
        self.get_client = GetClient(storage)
        self.create_client = CreateClient(
            storage,
            bus,
            clock,
            Live(AuthSettings()),
            Live(OAuthSettings(shared_scopes=("read",))),
            self.next_id,
        )
        self.update_client = UpdateClient(
            storage, bus, clock, Live(AuthSettings()), Live(OAuthSettings())
        )
        self.delete_client = DeleteClient(storage, bus, clock)
        self.rotate_client_secret = RotateClientSecret(storage, bus, clock, Live(OAuthSettings()))
        self.dashboard = Dashboard(storage, KeysOnly(), clock)  # type: ignore[arg-type]
        self.settings = Live(AuthSettings(bcrypt_rounds=4))
        self.hasher = BcryptHasher(self.settings)
        self.create_superadmin = CreateSuperadmin(
            storage, bus, self.hasher, clock, self.settings, normalize_email, self.next_id
        )
        self.set_role_by_operator = OperatorCommand(self.set_role, normalize_email)
        self.set_org_by_operator = OperatorCommand(self.move_user, normalize_email)

    def _record(self, event: Event) -> None:
        if self.spy.open_units:
            self.published_inside_unit.append(event)
        self.events.append(event)

    def next_id(self) -> str:
        self._seq += 1
        return f"id{self._seq:04d}"

    async def add_user(self, uid: str, role: Role = Role.VIEWER, org: str = CALLER_ORG) -> User:
        user = User(uid, f"{uid}@example.com", "hash", role, org, self.clock.now())
        async with self.spy.inner.begin() as uow:
            await uow.users.add(user)
            await uow.commit()
        return user

    async def add_audit_row(self, uid: str, org: str) -> str:
        """A ``user.registered`` audit row about ``uid`` in ``org``; returns its id."""
        now = self.clock.now()
        row = AuditEvent(new_audit_id(now), "user.registered", now, uid, uid, org)
        async with self.spy.inner.begin() as uow:
            await uow.audit.record(row)
            await uow.commit()
        return row.id

    async def add_passkey(self, uid: str) -> str:
        """A passkey of ``uid``; returns its id."""
        pid = f"pk-{uid}"
        passkey = Passkey(pid, uid, pid.encode(), b"key", 0, "0" * 36, False, False, (),
                          "laptop", self.clock.now())  # fmt: skip
        async with self.spy.inner.begin() as uow:
            await uow.passkeys.add(passkey)
            await uow.commit()
        return pid

    async def passkeys_of(self, uid: str) -> list[str]:
        async with self.spy.inner.begin() as uow:
            return [p.id for p in await uow.passkeys.list_for_user(uid)]

    async def add_client(self, cid: str, org: str) -> None:
        """An OAuth client ``cid`` of ``org``."""
        client = Client(cid, f"name-{cid}", org, ("read",), ("api",), False, False,
                        self.clock.now(), "0" * 64)  # fmt: skip
        async with self.spy.inner.begin() as uow:
            await uow.clients.add(client)
            await uow.commit()

    async def client(self, cid: str) -> Client | None:
        async with self.spy.inner.begin() as uow:
            return await uow.clients.get(cid)

    async def add_group(
        self, gid: str, org: str = CALLER_ORG, members: tuple[str, ...] = ()
    ) -> None:
        async with self.spy.inner.begin() as uow:
            await uow.groups.add(Group(gid, f"name-{gid}", org, self.clock.now()))
            for uid in members:
                await uow.groups.add_member(gid, uid, self.clock.now())
            await uow.commit()

    async def user(self, uid: str) -> User | None:
        async with self.spy.inner.begin() as uow:
            return await uow.users.get(uid)

    async def enable_mfa(self, uid: str) -> None:
        """Turn MFA on for ``uid`` (a confirmed secret, one recovery code)."""
        async with self.spy.inner.begin() as uow:
            user = await uow.users.get(uid)
            assert user is not None
            await uow.mfa.put_pending(uid, b"sealed secret", self.clock.now())
            assert await uow.mfa.confirm(uid, 1, ["0" * 64])
            await uow.users.update(attrs.evolve(user, mfa_enabled=True))
            await uow.commit()

    async def add_session(self, uid: str, sid: str) -> None:
        """A live session ``sid`` of ``uid`` with one refresh token."""
        now = self.clock.now()
        later = now + timedelta(days=1)
        async with self.spy.inner.begin() as uow:
            await uow.sessions.add(Session(sid, uid, now, now, later))
            await uow.tokens.add(RefreshToken(sid * 2, uid, sid, later, later, now))
            await uow.commit()

    async def state(self) -> tuple[list[User], list[Session]]:
        """Every user and every live session (to check that a refused call changed nothing)."""
        async with self.spy.inner.begin() as uow:
            users = await uow.users.list_page(None, None, 1000)
            sessions = [
                s for u in users for s in await uow.sessions.list_live(u.id, self.clock.now())
            ]
        return users, sessions

    async def groups_of(self, uid: str) -> list[str]:
        async with self.spy.inner.begin() as uow:
            return await uow.groups.groups_of(uid)

    async def group_exists(self, gid: str) -> bool:
        async with self.spy.inner.begin() as uow:
            return await uow.groups.get(gid) is not None


@pytest.fixture
def world() -> World:
    return World()


def as_principal(user: User) -> Principal:
    return Principal(user.id, user.role, user.org_id)


async def walk(fetch: Callable[[str | None], Awaitable[Page[Any]]]) -> list[Any]:
    """Every item of a listing, page after page, until ``next_cursor`` is None."""
    items: list[Any] = []
    cursor: str | None = None
    while True:
        page = await fetch(cursor)
        items.extend(page.items)
        if page.next_cursor is None:
            return items
        cursor = page.next_cursor


# --------------------------------------------------------------------------- the matrix


async def _seed_matrix(world: World, role: Role) -> Principal:
    """Caller of ``role`` in acme; in each of acme and globex: a viewer ``user-<org>`` (no
    group) with MFA on and a session, a ``member-<org>`` of ``group-<org>``."""
    me = await world.add_user("caller", role, CALLER_ORG)
    for org in (CALLER_ORG, OTHER_ORG):
        await world.add_user(f"user-{org}", Role.VIEWER, org)
        await world.add_session(f"user-{org}", f"session-{org}")
        await world.enable_mfa(f"user-{org}")
        await world.add_user(f"member-{org}", Role.VIEWER, org)
        await world.add_group(f"group-{org}", org, members=(f"member-{org}",))
        await world.add_audit_row(f"user-{org}", org)
        await world.add_client(f"client-{org}", org)
        await world.add_passkey(f"user-{org}")
    return as_principal(me)


async def _run(world: World, op: Operation, me: Principal, org: str) -> None:
    """Perform ``op`` on the ``org`` targets and check its effect when it is allowed."""
    user_id, group_id, member_id = f"user-{org}", f"group-{org}", f"member-{org}"
    if op is Operation.LIST_USERS:
        page = await world.list_users(me, org_id=org)
        assert {u.org_id for u in page.items} == {org}
        assert user_id in {u.id for u in page.items}
    elif op is Operation.VIEW_USER:
        assert (await world.get_user(me, user_id)).id == user_id
    elif op is Operation.SET_ROLE:
        assert (await world.set_role(me, user_id, "operator")).role is Role.OPERATOR
    elif op is Operation.MOVE_USER:
        assert (await world.move_user(me, user_id, THIRD_ORG)).org_id == THIRD_ORG
    elif op is Operation.DISABLE_USER:
        assert (await world.update_user(me, user_id, disabled=True)).disabled
        assert await world.list_sessions(me, user_id) == []  # its sessions ended with it
    elif op is Operation.DELETE_USER:
        await world.delete_user(me, user_id)
        assert await world.user(user_id) is None
    elif op is Operation.LIST_USER_SESSIONS:
        listed = await world.list_sessions(me, user_id)
        assert [x.session.id for x in listed] == [f"session-{org}"]
    elif op is Operation.END_USER_SESSIONS:
        assert await world.end_user_sessions(me, user_id) == [f"session-{org}"]
        assert await world.list_sessions(me, user_id) == []
    elif op is Operation.RESET_USER_MFA:
        await world.reset_user_mfa(me, user_id)
        target = await world.user(user_id)
        assert target is not None and not target.mfa_enabled
        assert [type(e) for e in world.events] == [MfaDisabled]
    elif op is Operation.LIST_GROUPS:
        groups = await world.list_groups(me, org_id=org)
        assert [s.group.id for s in groups.items] == [group_id]
    elif op is Operation.VIEW_GROUP:
        detail = await world.get_group(me, group_id)
        assert [m.id for m in detail.members] == [member_id]
    elif op is Operation.CREATE_GROUP:
        assert (await world.create_group(me, "new", org_id=org)).group.org_id == org
    elif op is Operation.RENAME_GROUP:
        assert (await world.rename_group(me, group_id, "renamed")).group.name == "renamed"
    elif op is Operation.DELETE_GROUP:
        await world.delete_group(me, group_id)
        assert not await world.group_exists(group_id)
    elif op is Operation.ADD_MEMBER:
        assert await world.add_member(me, group_id, user_id) is True
    elif op is Operation.REMOVE_MEMBER:
        assert await world.remove_member(me, group_id, member_id) is True
    elif op is Operation.LIST_AUDIT_EVENTS:
        rows = await world.list_audit_events(me, org_id=org)
        assert [(r.user_id, r.org_id) for r in rows.items] == [(user_id, org)]
    elif op is Operation.LIST_CLIENTS:
        clients = await world.list_clients(me, org_id=org)
        assert [c.id for c in clients.items] == [f"client-{org}"]
    elif op is Operation.VIEW_CLIENT:
        assert (await world.get_client(me, f"client-{org}")).org_id == org
    elif op is Operation.CREATE_CLIENT:
        made = await world.create_client(me, "new", ["read"], org_id=org)
        assert made.client.org_id == org and made.client_secret
    elif op is Operation.UPDATE_CLIENT:
        assert (await world.update_client(me, f"client-{org}", disabled=True)).disabled
    elif op is Operation.DELETE_CLIENT:
        await world.delete_client(me, f"client-{org}")
        assert await world.client(f"client-{org}") is None
    elif op is Operation.ROTATE_CLIENT_SECRET:
        before = await world.client(f"client-{org}")
        assert await world.rotate_client_secret(me, f"client-{org}")
        after = await world.client(f"client-{org}")
        assert before is not None and after is not None
        assert after.secret_hash != before.secret_hash
    elif op is Operation.LIST_USER_PASSKEYS:
        listed = await world.passkey_admin.list(me, user_id)
        assert [p.id for p in listed] == [f"pk-{user_id}"]
    elif op is Operation.DELETE_USER_PASSKEY:
        await world.passkey_admin.delete(me, user_id, f"pk-{user_id}")
        assert await world.passkeys_of(user_id) == []
    elif op is Operation.USE_ADMIN_CONSOLE:  # the console's home page for that organization
        ConsoleCaller.admit(me)
        assert (await world.dashboard(me, org_id=org)).users == (3 if org == me.org_id else 2)
    elif op is Operation.VIEW_DASHBOARD:
        view = await world.dashboard(me, org_id=org)
        assert view.users == (3 if org == me.org_id else 2)  # the caller counts in its org
        assert view.active_sessions == 1 and len(view.hours) == 24
        assert (view.signing_keys is None) is not me.is_superadmin
    elif op is Operation.VIEW_SIGNING_KEYS:
        assert [k.alg for k in world.dashboard.signing_keys(me)] == ["RS256"]
    else:  # pragma: no cover - a new Operation needs a line here
        raise AssertionError(op)


@pytest.mark.parametrize("case", MATRIX, ids=matrix_id)
async def test_permission_matrix_through_the_use_cases(
    world: World, case: tuple[Operation, str, Role, type[Exception] | None]
) -> None:
    op, org, role, expected = case
    me = await _seed_matrix(world, role)
    if expected is None:
        await _run(world, op, me, org)
    else:
        before = await world.state()
        with pytest.raises(expected) as info:
            await _run(world, op, me, org)
        assert type(info.value) is expected
        assert world.events == []
        assert await world.state() == before  # a refused call changes nothing


@pytest.mark.parametrize("role", [Role.VIEWER, Role.OPERATOR, Role.ORG_ADMIN])
async def test_not_found_is_the_same_for_missing_and_foreign_resources(
    world: World, role: Role
) -> None:
    me = await _seed_matrix(world, role)
    with pytest.raises(NotFound) as foreign:
        await world.get_group(me, f"group-{OTHER_ORG}")
    with pytest.raises(NotFound) as missing:
        await world.get_group(me, "no-such-group")
    assert foreign.value.detail == missing.value.detail


@pytest.mark.parametrize("role", [Role.VIEWER, Role.OPERATOR])
async def test_forbidden_role_gets_403_even_for_a_missing_target(world: World, role: Role) -> None:
    me = as_principal(await world.add_user("me", role))
    with pytest.raises(Forbidden):
        await world.get_user(me, "no-such-user")
    with pytest.raises(Forbidden):
        await world.set_role(me, "no-such-user", "not-a-role")
    with pytest.raises(Forbidden):
        await world.delete_group(me, "no-such-group")


# --------------------------------------------------------------------------- roles


class TestSetRole:
    async def test_org_admin_promotes_in_own_org_and_event_follows_commit(
        self, world: World
    ) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_user("bob")
        user = await world.set_role(admin_, "bob", Role.ORG_ADMIN)
        assert user.role is Role.ORG_ADMIN
        assert (await world.user("bob")).role is Role.ORG_ADMIN  # type: ignore[union-attr]
        assert world.events == [RoleChanged("bob", "admin", "viewer", "org_admin")]
        assert world.published_inside_unit == []

    async def test_org_admin_may_not_grant_superadmin(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_user("bob")
        with pytest.raises(Forbidden):
            await world.set_role(admin_, "bob", "superadmin")
        assert (await world.user("bob")).role is Role.VIEWER  # type: ignore[union-attr]

    async def test_org_admin_may_not_change_a_superadmin_of_its_org(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_user("root", Role.SUPERADMIN)
        await world.add_user("root2", Role.SUPERADMIN)
        with pytest.raises(Forbidden):
            await world.set_role(admin_, "root", "viewer")

    async def test_org_admin_gets_404_for_a_superadmin_of_another_org(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_user("root", Role.SUPERADMIN, OTHER_ORG)
        with pytest.raises(NotFound):
            await world.set_role(admin_, "root", "viewer")

    @pytest.mark.parametrize("new_role", ["viewer", "org_admin", "superadmin"])
    async def test_org_admin_may_not_change_its_own_role(self, world: World, new_role: str) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        with pytest.raises(Forbidden):
            await world.set_role(admin_, "admin", new_role)

    async def test_unknown_role_is_a_validation_error_naming_role(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_user("bob")
        with pytest.raises(ValidationFailed) as info:
            await world.set_role(root, "bob", "god")
        assert [e.field for e in info.value.errors] == ["role"]

    async def test_superadmin_sets_any_role_across_orgs(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_user("bob", org=OTHER_ORG)
        assert (await world.set_role(root, "bob", "superadmin")).role is Role.SUPERADMIN
        assert (await world.set_role(root, "bob", "operator")).role is Role.OPERATOR

    async def test_last_superadmin_cannot_demote_itself(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        with pytest.raises(LastSuperadmin):
            await world.set_role(root, "root", "org_admin")
        assert (await world.user("root")).role is Role.SUPERADMIN  # type: ignore[union-attr]
        assert world.events == []

    async def test_one_of_two_superadmins_may_go_then_the_other_may_not(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_user("root2", Role.SUPERADMIN, OTHER_ORG)
        await world.set_role(root, "root2", "viewer")
        with pytest.raises(LastSuperadmin):
            await world.set_role(root, "root", "viewer")

    async def test_concurrent_demotions_leave_one_superadmin(self, world: World) -> None:
        a = as_principal(await world.add_user("a", Role.SUPERADMIN))
        b = as_principal(await world.add_user("b", Role.SUPERADMIN))
        results = await asyncio.gather(
            world.set_role(a, "b", "viewer"),
            world.set_role(b, "a", "viewer"),
            return_exceptions=True,
        )
        assert sum(isinstance(r, LastSuperadmin) for r in results) == 1
        async with world.spy.inner.begin() as uow:
            assert await uow.users.count_by_role(Role.SUPERADMIN) == 1

    async def test_setting_the_same_role_writes_and_publishes_nothing(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_user("bob")
        commits = world.spy.commits
        assert (await world.set_role(root, "bob", "viewer")).role is Role.VIEWER
        assert world.events == []
        assert world.spy.commits == commits + 1  # an empty commit; nothing changed

    async def test_failed_commit_publishes_nothing_and_changes_nothing(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_user("bob")
        world.spy.fail_commit = True
        with pytest.raises(RuntimeError):
            await world.set_role(root, "bob", "operator")
        assert world.events == []
        assert (await world.user("bob")).role is Role.VIEWER  # type: ignore[union-attr]

    async def test_subscriber_sees_the_committed_role(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_user("bob")
        seen: list[Role] = []

        async def read_back(event: RoleChanged) -> None:
            user = await world.user(event.user_id)  # would deadlock inside the unit
            assert user is not None
            seen.append(user.role)

        world.bus.subscribe(RoleChanged, read_back)
        await asyncio.wait_for(world.set_role(root, "bob", "operator"), timeout=5)
        assert seen == [Role.OPERATOR]


# --------------------------------------------------------------------------- pagination


class TestPagination:
    async def test_walk_to_the_end_under_concurrent_inserts(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        for _ in range(40):
            await world.add_user(new_id())
        before = {u.id for u in await walk(lambda c: world.list_users(root, limit=200, cursor=c))}
        assert len(before) == 41
        inserted: list[str] = []

        async def insert() -> None:
            for _ in range(60):
                uid = new_id()
                await world.add_user(uid)
                inserted.append(uid)
                await asyncio.sleep(0)

        progress: list[int] = []

        async def fetch(cursor: str | None) -> Page[User]:
            progress.append(len(inserted))
            await asyncio.sleep(0)
            return await world.list_users(root, limit=7, cursor=cursor)

        walked, _ = await asyncio.gather(walk(fetch), insert())
        ids = [u.id for u in walked]
        assert len(ids) == len(set(ids)), "a row appeared twice"
        assert ids == sorted(ids)
        assert before <= set(ids), "a row that existed before the walk was skipped"
        assert set(ids) <= before | set(inserted)
        assert any(0 < n < 60 for n in progress), "the inserts did not interleave with the walk"

    async def test_inserts_before_and_after_the_cursor(self, world: World) -> None:
        root = as_principal(await world.add_user("m-root", Role.SUPERADMIN))
        for i in range(10):
            await world.add_user(f"m-{i:02d}")
        page = await world.list_users(root, limit=5)
        assert [u.id for u in page.items] == ["m-00", "m-01", "m-02", "m-03", "m-04"]
        await world.add_user("a-early")  # sorts before the cursor: not seen by this walk
        await world.add_user("z-late")  # sorts after it: seen
        rest = await walk(lambda c: world.list_users(root, limit=5, cursor=c or page.next_cursor))
        assert [u.id for u in rest] == [
            "m-05", "m-06", "m-07", "m-08", "m-09", "m-root", "z-late",
        ]  # fmt: skip

    async def test_an_exact_last_page_has_no_next_cursor(self, world: World) -> None:
        root = as_principal(await world.add_user("u0", Role.SUPERADMIN))
        for i in range(1, 4):
            await world.add_user(f"u{i}")
        page = await world.list_users(root, limit=4)
        assert len(page.items) == 4
        assert page.next_cursor is None
        page = await world.list_users(root, limit=3)
        assert page.next_cursor is not None

    async def test_default_limit_is_50(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        for i in range(59):
            await world.add_user(f"u{i:03d}")
        page = await world.list_users(root)
        assert len(page.items) == pagination.DEFAULT_PAGE_LIMIT == 50
        assert len((await world.list_users(root, cursor=page.next_cursor)).items) == 10

    @pytest.mark.parametrize("limit", [0, -1, 201, True])
    async def test_bad_limit_names_limit(self, world: World, limit: int) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        with pytest.raises(ValidationFailed) as info:
            await world.list_users(root, limit=limit)
        assert [e.field for e in info.value.errors] == ["limit"]

    @pytest.mark.parametrize("limit", [1, 200])
    async def test_limit_bounds_are_accepted(self, world: World, limit: int) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        assert len((await world.list_users(root, limit=limit)).items) == 1

    @pytest.mark.parametrize(
        "cursor",
        [
            "",
            "not base64!",
            "bm90IGpzb24",  # "not json"
            "W10",  # []
            pagination.encode_cursor("groups", "x"),  # another listing's cursor
            pagination.encode_cursor("users", ""),
            "e30" * 400,
        ],
    )
    async def test_bad_cursor_names_cursor(self, world: World, cursor: str) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        with pytest.raises(ValidationFailed) as info:
            await world.list_users(root, cursor=cursor)
        assert [e.field for e in info.value.errors] == ["cursor"]

    def test_cursor_round_trip_is_url_safe(self) -> None:
        cursor = pagination.encode_cursor("users", "ü/+?=" * 3)
        assert set(cursor) <= set(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        )
        assert pagination.decode_cursor("users", cursor) == "ü/+?=" * 3

    async def test_org_admin_walk_sees_only_its_org(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        for i in range(12):
            await world.add_user(f"u{i:02d}", org=CALLER_ORG if i % 3 else OTHER_ORG)
        items = await walk(lambda c: world.list_users(admin_, limit=2, cursor=c))
        assert {u.org_id for u in items} == {CALLER_ORG}
        assert len(items) == 1 + 8
        own = await walk(lambda c: world.list_users(admin_, limit=2, cursor=c, org_id=CALLER_ORG))
        assert own == items

    async def test_superadmin_lists_every_org_or_one(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_user("a", org=OTHER_ORG)
        await world.add_user("b", org=THIRD_ORG)
        everyone = (await world.list_users(root)).items
        assert {u.id for u in everyone} == {"root", "a", "b"}
        assert [u.id for u in (await world.list_users(root, org_id=THIRD_ORG)).items] == ["b"]

    async def test_groups_paginate_with_member_counts(self, world: World) -> None:
        viewer = as_principal(await world.add_user("v"))
        for i in range(5):
            await world.add_group(f"g{i}", members=("v",) if i % 2 else ())
        await world.add_group("foreign", OTHER_ORG)
        items = await walk(lambda c: world.list_groups(viewer, limit=2, cursor=c))
        assert [s.group.id for s in items] == ["g0", "g1", "g2", "g3", "g4"]
        assert [s.member_count for s in items] == [0, 1, 0, 1, 0]
        users_cursor = pagination.encode_cursor("users", "g1")
        with pytest.raises(ValidationFailed):
            await world.list_groups(viewer, cursor=users_cursor)


# --------------------------------------------------------------------------- moving users


class TestMoveUser:
    async def test_move_removes_old_org_memberships_in_one_unit(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_user("bob")
        await world.add_user("carol")
        await world.add_group("ga", members=("bob", "carol"))
        await world.add_group("gb", members=("bob",))
        await world.add_group("gc")
        commits = world.spy.commits
        moved = await world.move_user(root, "bob", OTHER_ORG)
        assert moved.org_id == OTHER_ORG
        assert world.spy.commits == commits + 1
        assert await world.groups_of("bob") == []
        assert await world.groups_of("carol") == ["ga"]
        assert world.events[0] == UserMoved("bob", "root", CALLER_ORG, OTHER_ORG)
        assert sorted(world.events[1:], key=lambda e: e.group_id) == [  # type: ignore[attr-defined]
            GroupMembershipChanged("ga", "bob", "root", False, CALLER_ORG),
            GroupMembershipChanged("gb", "bob", "root", False, CALLER_ORG),
        ]
        assert world.published_inside_unit == []
        # the moved user is now in the other org's scope only
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        with pytest.raises(NotFound):
            await world.get_user(admin_, "bob")

    async def test_moving_to_the_same_org_changes_nothing(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_group("ga", members=("root",))
        assert (await world.move_user(root, "root", CALLER_ORG)).org_id == CALLER_ORG
        assert await world.groups_of("root") == ["ga"]
        assert world.events == []

    async def test_failed_commit_keeps_memberships_and_publishes_nothing(
        self, world: World
    ) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_user("bob")
        await world.add_group("ga", members=("bob",))
        world.spy.fail_commit = True
        with pytest.raises(RuntimeError):
            await world.move_user(root, "bob", OTHER_ORG)
        assert (await world.user("bob")).org_id == CALLER_ORG  # type: ignore[union-attr]
        assert await world.groups_of("bob") == ["ga"]
        assert world.events == []

    @pytest.mark.parametrize("org", ["", " padded", "x" * 129, "tab\there"])
    async def test_bad_org_id_names_org_id(self, world: World, org: str) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        with pytest.raises(ValidationFailed) as info:
            await world.move_user(root, "root", org)
        assert [e.field for e in info.value.errors] == ["org_id"]

    async def test_missing_user_is_not_found(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        with pytest.raises(NotFound):
            await world.move_user(root, "ghost", OTHER_ORG)


# --------------------------------------------------------------------------- groups


class TestGroups:
    async def test_org_admin_creates_in_own_org_by_default(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        created = await world.create_group(admin_, "  ops  ")
        assert created.group == Group("id0001", "ops", CALLER_ORG, world.clock.now())
        assert created.member_count == 0
        assert await world.group_exists("id0001")

    async def test_superadmin_creates_in_named_org_or_own(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        assert (await world.create_group(root, "a", org_id=THIRD_ORG)).group.org_id == THIRD_ORG
        assert (await world.create_group(root, "a")).group.org_id == CALLER_ORG

    async def test_duplicate_name_in_org_is_a_conflict(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.create_group(admin_, "ops")
        with pytest.raises(Conflict):
            await world.create_group(admin_, "ops")
        dev = await world.create_group(admin_, "dev")
        with pytest.raises(Conflict):
            await world.rename_group(admin_, dev.group.id, "ops")

    @pytest.mark.parametrize("name", ["", "   ", "x" * 101, "bell\a"])
    async def test_bad_name_names_name(self, world: World, name: str) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        with pytest.raises(ValidationFailed) as info:
            await world.create_group(admin_, name)
        assert [e.field for e in info.value.errors] == ["name"]

    async def test_get_group_lists_members_by_id_with_email(self, world: World) -> None:
        viewer = as_principal(await world.add_user("v"))
        await world.add_user("b")
        await world.add_group("g", members=("v", "b"))
        detail = await world.get_group(viewer, "g")
        assert [(m.id, m.email) for m in detail.members] == [
            ("b", "b@example.com"),
            ("v", "v@example.com"),
        ]
        assert detail.summary.member_count == 2
        assert detail.group.id == "g"

    async def test_delete_removes_memberships_and_announces_them(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_user("b")
        await world.add_group("g", members=("admin", "b"))
        await world.delete_group(admin_, "g")
        assert not await world.group_exists("g")
        assert await world.groups_of("b") == []
        assert world.events == [
            GroupDeleted("g", CALLER_ORG, "admin"),
            GroupMembershipChanged("g", "admin", "admin", False, CALLER_ORG),
            GroupMembershipChanged("g", "b", "admin", False, CALLER_ORG),
        ]
        with pytest.raises(NotFound):
            await world.delete_group(admin_, "g")


class TestMembers:
    async def test_add_is_idempotent_and_announced_once(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_user("bob")
        await world.add_group("g")
        assert await world.add_member(admin_, "g", "bob") is True
        assert await world.add_member(admin_, "g", "bob") is False
        assert await world.groups_of("bob") == ["g"]
        assert world.events == [GroupMembershipChanged("g", "bob", "admin", True, CALLER_ORG)]
        assert world.published_inside_unit == []

    async def test_superadmin_adding_a_user_of_another_org_gets_422(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_user("bob", org=OTHER_ORG)
        await world.add_group("g", CALLER_ORG)
        with pytest.raises(ValidationFailed) as info:
            await world.add_member(root, "g", "bob")
        assert [e.field for e in info.value.errors] == ["user_id"]
        assert await world.groups_of("bob") == []

    async def test_org_admin_adding_a_user_of_another_org_gets_404(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_user("bob", org=OTHER_ORG)
        await world.add_group("g")
        with pytest.raises(NotFound):
            await world.add_member(admin_, "g", "bob")

    async def test_missing_user_or_group_is_404(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_group("g")
        with pytest.raises(NotFound):
            await world.add_member(admin_, "g", "ghost")
        with pytest.raises(NotFound):
            await world.add_member(admin_, "ghost", "admin")
        with pytest.raises(NotFound):
            await world.remove_member(admin_, "g", "ghost")

    async def test_remove_non_member_succeeds_quietly(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_group("g")
        assert await world.remove_member(admin_, "g", "admin") is False
        assert world.events == []

    async def test_remove_member_is_announced_after_commit(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_group("g", members=("admin",))
        assert await world.remove_member(admin_, "g", "admin") is True
        assert await world.groups_of("admin") == []
        assert world.events == [GroupMembershipChanged("g", "admin", "admin", False, CALLER_ORG)]
        assert world.published_inside_unit == []

    async def test_failed_commit_adds_nothing_and_publishes_nothing(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_group("g")
        world.spy.fail_commit = True
        with pytest.raises(RuntimeError):
            await world.add_member(admin_, "g", "admin")
        assert await world.groups_of("admin") == []
        assert world.events == []


# --------------------------------------------------------------------------- operator CLI


class TestCreateSuperadmin:
    async def test_creates_a_superadmin_with_a_hashed_password(self, world: World) -> None:
        result = await world.create_superadmin("  Root@Example.COM ", "correct horse")
        assert result.created is True
        user = result.user
        assert (user.email, user.role, user.org_id) == (
            "root@example.com",
            Role.SUPERADMIN,
            "default",
        )
        assert user.password_hash.startswith("$2b$04$")
        assert await world.hasher.verify("correct horse", user.password_hash)
        assert await world.user(user.id) == user
        assert world.events == [UserRegistered(user.id, "default")]

    async def test_creates_in_a_named_org(self, world: World) -> None:
        result = await world.create_superadmin("r@example.com", "correct horse", org_id="ops")
        assert result.user.org_id == "ops"

    async def test_promotes_an_existing_user_keeping_its_password(self, world: World) -> None:
        bob = await world.add_user("bob", Role.OPERATOR, OTHER_ORG)
        result = await world.create_superadmin("BOB@example.com", None)
        assert result.created is False
        assert result.user == User(
            "bob", bob.email, "hash", Role.SUPERADMIN, OTHER_ORG, bob.created_at
        )
        assert world.events == [RoleChanged("bob", OPERATOR_ACTOR_ID, "operator", "superadmin")]

    async def test_existing_superadmin_is_left_alone(self, world: World) -> None:
        await world.add_user("root", Role.SUPERADMIN)
        result = await world.create_superadmin("root@example.com", "whatever1")
        assert (result.created, result.user.role) == (False, Role.SUPERADMIN)
        assert world.events == []

    @pytest.mark.parametrize("password", [None, "short", "é" * 40])
    async def test_new_user_needs_a_password_within_policy(
        self, world: World, password: str | None
    ) -> None:
        with pytest.raises(ValidationFailed) as info:
            await world.create_superadmin("new@example.com", password)
        assert [e.field for e in info.value.errors] == ["password"]
        assert world.events == []

    async def test_bad_email_is_refused_by_the_normalizer(self, world: World) -> None:
        with pytest.raises(ValidationFailed) as info:
            await world.create_superadmin("not-an-email", "correct horse")
        assert [e.field for e in info.value.errors] == ["email"]


class TestOperatorCommands:
    async def test_set_role_by_email(self, world: World) -> None:
        await world.add_user("bob")
        user = await world.set_role_by_operator("Bob@Example.com", "org_admin")
        assert user.role is Role.ORG_ADMIN
        assert world.events == [RoleChanged("bob", "cli", "viewer", "org_admin")]

    async def test_operator_cannot_demote_the_last_superadmin(self, world: World) -> None:
        await world.add_user("root", Role.SUPERADMIN)
        with pytest.raises(LastSuperadmin):
            await world.set_role_by_operator("root@example.com", "viewer")
        await world.add_user("root2", Role.SUPERADMIN)
        assert (await world.set_role_by_operator("root@example.com", "viewer")).role is Role.VIEWER

    async def test_unknown_email_or_role(self, world: World) -> None:
        with pytest.raises(NotFound):
            await world.set_role_by_operator("ghost@example.com", "viewer")
        await world.add_user("bob")
        with pytest.raises(ValidationFailed):
            await world.set_role_by_operator("bob@example.com", "root")

    async def test_set_org_moves_and_drops_old_memberships(self, world: World) -> None:
        await world.add_user("bob")
        await world.add_group("g", members=("bob",))
        user = await world.set_org_by_operator("bob@example.com", OTHER_ORG)
        assert user.org_id == OTHER_ORG
        assert await world.groups_of("bob") == []
        assert world.events == [
            UserMoved("bob", "cli", CALLER_ORG, OTHER_ORG),
            GroupMembershipChanged("g", "bob", "cli", False, CALLER_ORG),
        ]
        with pytest.raises(NotFound):
            await world.set_org_by_operator("ghost@example.com", OTHER_ORG)


def test_new_id_is_32_hex() -> None:
    ids = {new_id() for _ in range(100)}
    assert len(ids) == 100
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)


def test_created_at_is_aware() -> None:
    assert FakeClock().now().tzinfo is not None
    assert isinstance(FakeClock().now(), datetime)
