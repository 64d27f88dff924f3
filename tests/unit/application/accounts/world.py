"""The accounts tests' world: one in-memory backend behind a spy that counts open units and
commits (``SpyStorage``), a bus that records every event, a fake clock, and every admin use
case wired to them (``World``); and two helpers, ``as_principal`` and ``walk`` (every page of a
listing)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import attrs

from adapters.crypto.bcrypt_hasher import BcryptHasher
from adapters.crypto.sealer import AesGcmSealer
from adapters.events.inprocess import InProcessEventBus
from adapters.mail.writer import TemplateMailWriter
from adapters.persistence.memory import MemoryLoginAttempts, MemoryStorage
from application.accounts.groups import (
    AddMember,
    CreateGroup,
    DeleteGroup,
    GetGroup,
    ListGroups,
    RemoveMember,
    RenameGroup,
)
from application.accounts.invitations import (
    CreateInvitation,
    ListInvitations,
    ResendInvitation,
    RevokeInvitation,
)
from application.accounts.lifecycle import DeleteUser, UpdateUser
from application.accounts.operator import CreateSuperadmin, OperatorCommand
from application.accounts.users import GetUser, ListUsers, SetRole
from application.audit.query import ListAuditEvents
from application.console.dashboard import Dashboard
from application.events.catalog import (
    Event,
)
from application.federation.providers import ListIdentityProviders
from application.federation.settings import FederationSettings
from application.integration.manage import (
    CreateWebhook,
    DeleteWebhook,
    GetWebhook,
    ListWebhookDeliveries,
    ListWebhooks,
    RotateWebhookSecret,
    TestWebhook,
    UpdateWebhook,
)
from application.integration.settings import WebhooksSettings
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
from application.ports import EmailMessage, EmailSender, ProviderProbe, ProviderProbes
from application.recovery.email_links import PasswordRecovery
from application.recovery.mail import Outbox
from application.sessions.manage import EndUserSessions, ListSessions
from application.shared.pagination import Page
from application.shared.settings import AuthSettings, EmailSettings, Live, OAuthSettings
from application.shared.steps import hash_token
from application.shared.throttle import LoginThrottle
from domain.audit import AuditEvent, new_audit_id
from domain.clients import Client
from domain.errors import (
    FieldError,
    ValidationFailed,
)
from domain.invitations import Invitation
from domain.model import Group, RefreshToken, Role, Session, User
from domain.passkeys import Passkey
from domain.policy import Principal
from domain.webhooks import Webhook
from tests.fakes import FakeClock
from tests.unit.domain.test_policy import CALLER_ORG

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
        self.invitations = uow.invitations
        self.outbox = uow.outbox
        self.webhooks = uow.webhooks
        self.scim = uow.scim

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


class KeepingSender(EmailSender):
    """Keeps every message it is asked to send."""

    def __init__(self) -> None:
        self.sent: list[EmailMessage] = []

    async def send(self, message: EmailMessage) -> None:
        self.sent.append(message)


class NoProbes(ProviderProbes):
    """No provider is configured: nothing to probe."""

    async def probes(self) -> dict[str, ProviderProbe]:
        return {}


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
        self.sender = KeepingSender()
        email = Live(EmailSettings())
        writer = TemplateMailWriter(lambda: "", lambda: ("en",), lambda: "en")
        self.outbox = Outbox(self.sender, bus, email, writer)
        self.password_recovery = PasswordRecovery(
            storage, self.outbox, clock, self.settings, email, bus,
            LoginThrottle(MemoryLoginAttempts(), clock, self.settings), self.hasher,
            normalize_email,
        )  # fmt: skip
        self.identity_providers = ListIdentityProviders(Live(FederationSettings()), NoProbes())
        self.set_role_by_operator = OperatorCommand(self.set_role, normalize_email)
        self.mails: list[tuple[Invitation, str]] = []
        self.create_invitation = CreateInvitation(
            storage, bus, clock, self.settings, normalize_email,
            lambda i, t: self.mails.append((i, t)), self.next_id,
        )  # fmt: skip
        self.list_invitations = ListInvitations(storage, clock)
        self.resend_invitation = ResendInvitation(
            storage, bus, clock, self.settings, lambda i, t: self.mails.append((i, t))
        )
        self.revoke_invitation = RevokeInvitation(storage, bus, clock)
        self.sealer = AesGcmSealer(bytes(32))
        hooks = Live(WebhooksSettings())
        self.create_webhook = CreateWebhook(storage, bus, clock, self.sealer, hooks, self.next_id)
        self.list_webhooks = ListWebhooks(storage)
        self.get_webhook = GetWebhook(storage)
        self.update_webhook = UpdateWebhook(storage, bus, clock, hooks)
        self.delete_webhook = DeleteWebhook(storage, bus, clock)
        self.rotate_webhook_secret = RotateWebhookSecret(storage, bus, clock, self.sealer)
        self.list_webhook_deliveries = ListWebhookDeliveries(storage)
        self.test_webhook = TestWebhook(storage, clock)
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

    async def add_invitation(self, iid: str, org: str = CALLER_ORG) -> None:
        """A pending invitation ``iid`` of ``{iid}@example.com`` into ``org`` (a viewer)."""
        now = self.clock.now()
        async with self.spy.inner.begin() as uow:
            await uow.invitations.add(Invitation(iid, org, f"{iid}@example.com", Role.VIEWER, (),
                                                 "admin", now, now + timedelta(days=7),
                                                 hash_token(iid)))  # fmt: skip
            await uow.commit()

    async def add_webhook(self, wid: str, org: str = CALLER_ORG) -> None:
        """An enabled endpoint ``wid`` of ``org`` subscribed to ``group.created``."""
        now = self.clock.now()
        async with self.spy.inner.begin() as uow:
            await uow.webhooks.add(Webhook(wid, org, f"https://{wid}.example/", ("group.created",),
                                           "", True, self.sealer.seal(b"whsec_x", wid.encode()),
                                           now, now))  # fmt: skip
            await uow.commit()

    async def webhook(self, wid: str) -> Webhook | None:
        async with self.spy.inner.begin() as uow:
            return await uow.webhooks.get(wid)

    async def invitation(self, iid: str) -> Invitation | None:
        async with self.spy.inner.begin() as uow:
            return await uow.invitations.get(iid)

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
