"""The caller's consents (docs/reference/oauth-and-oidc.md) on the in-memory adapters: listed newest
first with the client's name, revoked together with the sessions that client started (and only
those), with their events and audit rows; 404 without a consent."""

from __future__ import annotations

from datetime import timedelta

import pytest

from adapters.events.inprocess import InProcessEventBus
from adapters.persistence.memory import MemoryStorage
from application.events.catalog import SessionEnded
from application.events.oidc import ConsentRevoked
from application.oauth.consents import ListConsents, ListedConsent, RevokeConsent
from domain.audit import AuditQuery
from domain.clients import Client
from domain.errors import NotFound
from domain.model import Role, Session, User
from domain.oidc import Consent
from domain.policy import Principal
from tests.fakes import FakeClock, Recorder

APP_A, APP_B = "a" * 32, "b" * 32


def _principal(user_id: str) -> Principal:
    return Principal(user_id, Role.VIEWER, "org-a")


async def _world(storage: MemoryStorage, clock: FakeClock) -> list[Session]:
    """alice; clients A and B; her consent to both (B later); a session of A, one of B and a
    JSON-API one. Returns the sessions (A's, B's, the JSON-API one)."""
    t0 = clock.now()
    alice = User("alice", "alice@example.com", "x", Role.VIEWER, "org-a", t0)
    sessions = [
        Session(f"s-{n}", "alice", t0, t0, t0 + timedelta(days=1), None, None, client)
        for n, client in enumerate((APP_A, APP_B, None))
    ]
    async with storage.begin() as uow:
        await uow.users.add(alice)
        for client_id, name in ((APP_A, "App A"), (APP_B, "App B")):
            await uow.clients.add(
                Client(client_id, name, "org-a", ("openid",), (), False, False, t0, "")
            )
        await uow.consents.grant(Consent("alice", APP_A, ("openid", "email"), t0))
        await uow.consents.grant(Consent("alice", APP_B, ("openid",), t0 + timedelta(1)))
        for session in sessions:
            await uow.sessions.add(session)
        await uow.commit()
    return sessions


async def test_list_is_newest_first_with_the_client_names(
    storage: MemoryStorage, clock: FakeClock
) -> None:
    await _world(storage, clock)
    listed = await ListConsents(storage)(_principal("alice"))
    assert [(c.consent.client_id, c.client_name) for c in listed] == [
        (APP_B, "App B"),
        (APP_A, "App A"),
    ]
    assert listed[1] == ListedConsent(Consent("alice", APP_A, ("openid", "email"), clock.now()),
                                      "App A")  # fmt: skip
    assert await ListConsents(storage)(_principal("bob")) == []


async def test_revoke_ends_only_that_clients_sessions_and_records_it(
    storage: MemoryStorage, bus: InProcessEventBus, clock: FakeClock
) -> None:
    a_session, b_session, api_session = await _world(storage, clock)
    recorder = Recorder(bus)
    ended = await RevokeConsent(storage, bus, clock)(_principal("alice"), APP_A)
    assert ended == [a_session.id]
    assert recorder.of(ConsentRevoked) == [ConsentRevoked("alice", APP_A, 1)]
    assert recorder.of(SessionEnded) == [SessionEnded("alice", a_session.id, "user", "alice")]
    async with storage.begin() as uow:
        assert await uow.consents.get("alice", APP_A) is None
        assert await uow.consents.get("alice", APP_B) is not None
        assert await uow.sessions.get(a_session.id) is None
        assert await uow.sessions.get(b_session.id) == b_session
        assert await uow.sessions.get(api_session.id) == api_session
        rows = await uow.audit.list_page(AuditQuery(), None, 10)
    assert sorted(r.type for r in rows) == ["oauth.consent_revoked", "session.ended"]


async def test_revoke_without_a_consent_is_not_found_and_changes_nothing(
    storage: MemoryStorage, bus: InProcessEventBus, clock: FakeClock
) -> None:
    await _world(storage, clock)
    revoke = RevokeConsent(storage, bus, clock)
    with pytest.raises(NotFound):
        await revoke(_principal("bob"), APP_A)  # another user's consent
    await revoke(_principal("alice"), APP_A)
    with pytest.raises(NotFound):
        await revoke(_principal("alice"), APP_A)  # already revoked
    async with storage.begin() as uow:
        rows = await uow.audit.list_page(AuditQuery(), None, 10)
    assert sorted(r.type for r in rows) == ["oauth.consent_revoked", "session.ended"]
