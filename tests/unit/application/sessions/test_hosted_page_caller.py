"""``HostedPageCaller`` (application/sessions/hosted.py): the account pages' caller from the
hosted session; each view is a use of the session (docs/reference/tokens-and-sessions.md: its
idle end and its "last used" move on)."""

from __future__ import annotations

from datetime import timedelta

import attrs

from adapters.persistence.memory import MemoryStorage
from application.sessions.hosted import HostedPageCaller, hosted_session_hash
from domain.model import Session
from domain.oidc import HostedSession
from tests.factories import Make
from tests.fakes import FakeClock

IDLE = 600
COOKIE = "c" * 43


async def _signed_in(storage: MemoryStorage, make: Make, clock: FakeClock) -> HostedSession:
    now = clock.now()
    user = make.user(id="alice")
    session = Session("s-1", user.id, now, now, now + timedelta(days=30))
    hosted = HostedSession(hosted_session_hash(COOKIE), session.id, user.id, now, ("pwd",), "1",
                           now + timedelta(seconds=IDLE), session.expires_at)  # fmt: skip
    async with storage.begin() as uow:
        await uow.users.add(user)
        await uow.sessions.add(session)
        await uow.hosted_sessions.add(hosted)
        await uow.commit()
    return hosted


async def test_a_page_view_moves_the_idle_end_and_last_used_on(
    storage: MemoryStorage, clock: FakeClock
) -> None:
    hosted = await _signed_in(storage, Make(), clock)
    caller = HostedPageCaller(storage, clock, lambda: IDLE)
    clock.advance(300)
    found = await caller(COOKIE)
    assert found is not None and found[1].id == "alice" and found[0].session_id == "s-1"
    async with storage.read() as uow:
        session = await uow.sessions.get("s-1")
        moved = await uow.hosted_sessions.find(hosted.id_hash, clock.now())
    assert session is not None and session.last_used_at == clock.now()
    assert moved == attrs.evolve(hosted, idle_expires_at=clock.now() + timedelta(seconds=IDLE))


async def test_no_cookie_an_unknown_one_or_an_idle_session_is_nobody(
    storage: MemoryStorage, clock: FakeClock
) -> None:
    await _signed_in(storage, Make(), clock)
    caller = HostedPageCaller(storage, clock, lambda: IDLE)
    assert await caller(None) is None
    assert await caller("x" * 43) is None
    assert await caller("x" * 500) is None
    clock.advance(IDLE)
    assert await caller(COOKIE) is None  # idle past its end: a new login is needed
    async with storage.read() as uow:
        session = await uow.sessions.get("s-1")
    assert session is not None and session.last_used_at == session.created_at  # not a use
