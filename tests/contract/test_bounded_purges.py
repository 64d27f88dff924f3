"""Housekeeping's bounded batches (docs/reference/operations.md; issue 35), over every storage
adapter: a purge with a ``limit`` deletes at most that many rows of each table, only expired ones,
and the rest on the next call; ``PurgeExpired`` drains a backlog larger than its batch, one
committed transaction per batch (refresh tokens, sessions, audit events, and the provider's
authorization codes and hosted sessions, the started federated logins, and the webhook
delivery log past ``webhooks.delivery_retention``)."""

from __future__ import annotations

from datetime import datetime, timedelta

from application.audit.housekeeping import PurgeExpired
from application.ports import Storage
from application.shared.settings import AuditSettings, Live
from domain.audit import AuditEvent, new_audit_id
from domain.clients import Client
from domain.federation import FederationFlow
from domain.oidc import AuthorizationCode, HostedSession
from domain.webhooks import Webhook, WebhookDelivery
from tests.factories import T0, Make
from tests.fakes import FakeClock

NOW = T0 + timedelta(hours=1)


async def _expired_and_live_tokens(storage: Storage, make: Make, expired: int) -> str:
    """``expired`` expired live tokens and as many expired rotated records, plus one live token
    that must survive; returns the survivor's hash."""
    async with storage.begin() as uow:
        await uow.users.add(make.user(id="owner"))
        for _ in range(expired):
            await uow.tokens.add(make.token("owner", expires_at=NOW - timedelta(seconds=1)))
            await uow.tokens.remember_rotated(
                make.token("owner", expires_at=NOW - timedelta(seconds=1)), T0
            )
        survivor = make.token("owner", expires_at=NOW + timedelta(seconds=1))
        await uow.tokens.add(survivor)
        await uow.commit()
    return survivor.token_hash


async def test_a_limited_token_purge_deletes_at_most_the_limit_of_each_table(
    storage: Storage, make: Make
) -> None:
    survivor = await _expired_and_live_tokens(storage, make, expired=5)
    deleted = []
    for _ in range(4):
        async with storage.begin() as uow:
            deleted.append(await uow.tokens.purge_expired(NOW, 2))
            await uow.commit()
    assert deleted == [4, 4, 2, 0]  # two live + two rotated per call, then the remainder
    async with storage.read() as uow:
        assert await uow.tokens.find(survivor) is not None


async def test_a_limited_session_purge_keeps_live_sessions(storage: Storage, make: Make) -> None:
    async with storage.begin() as uow:
        await uow.users.add(make.user(id="alice"))
        live = make.session("alice")
        await uow.sessions.add(live)
        await uow.tokens.add(make.token("alice", live.id, expires_at=NOW + timedelta(1)))
        for _ in range(3):
            await uow.sessions.add(make.session("alice"))  # no live token: ended
        await uow.commit()
    counts = []
    for _ in range(3):
        async with storage.begin() as uow:
            counts.append(await uow.sessions.purge_expired(NOW, 2))
            await uow.commit()
    assert counts == [2, 1, 0]
    async with storage.read() as uow:
        assert await uow.sessions.get(live.id) == live


async def test_a_limited_audit_purge_deletes_the_oldest_rows_only(storage: Storage) -> None:
    async with storage.begin() as uow:
        for second in range(5):
            when = T0 + timedelta(seconds=second)
            await uow.audit.record(
                AuditEvent(
                    new_audit_id(when), "login.failed", when, None, None, "org-a", None, None, {}
                )
            )
        await uow.commit()
    cutoff = T0 + timedelta(seconds=3)  # rows at 0, 1, 2 are older
    async with storage.begin() as uow:
        assert await uow.audit.purge_before(cutoff, 2) == 2
        assert await uow.audit.purge_before(cutoff, 2) == 1
        assert await uow.audit.purge_before(cutoff, 2) == 0
        await uow.commit()


async def test_housekeeping_drains_a_backlog_larger_than_its_batch(
    storage: Storage, make: Make
) -> None:
    survivor = await _expired_and_live_tokens(storage, make, expired=7)
    clock = FakeClock(NOW)
    purge = PurgeExpired(storage, clock, Live(AuditSettings()), batch=3)
    assert await purge() == 14  # seven live and seven rotated, in batches of three per table
    async with storage.read() as uow:
        assert await uow.tokens.find(survivor) is not None
    assert await purge() == 0


CLIENT = Client("c" * 32, "app", "org-a", ("openid",), (), False, False, T0, "")


async def _alice(storage: Storage, make: Make) -> None:
    async with storage.begin() as uow:
        await uow.users.add(make.user(id="alice"))
        await uow.clients.add(CLIENT)
        await uow.commit()


def _code(code_hash: str, expires_at: datetime) -> AuthorizationCode:
    return AuthorizationCode(
        code_hash, CLIENT.id, "alice", "https://app.example/cb", "x" * 43, None, ("openid",),
        "fam-x", T0, ("pwd",), "1", T0, expires_at,
    )  # fmt: skip


async def _codes(storage: Storage, expired: int) -> str:
    """``expired`` expired authorization codes of alice and a live one; the live one's hash."""
    async with storage.begin() as uow:
        for n in range(expired):
            await uow.codes.add(_code(f"{n:064x}", NOW - timedelta(seconds=1)))
        await uow.codes.add(_code("f" * 64, NOW + timedelta(seconds=1)))
        await uow.commit()
    return "f" * 64


async def _hosted_sessions(storage: Storage, make: Make, expired: int) -> HostedSession:
    """``expired`` hosted sessions of alice past their idle end at ``NOW`` and a live one, each
    with its own ``sessions`` row (kept alive by the hosted session alone); the live one."""
    async with storage.begin() as uow:
        for n in range(expired + 1):
            row = make.session("alice")
            idle = NOW + timedelta(seconds=1 if n == expired else -1)
            hosted = HostedSession(
                f"{n:064x}", row.id, "alice", T0, ("pwd",), "1", idle, T0 + timedelta(days=1)
            )
            await uow.sessions.add(row)
            await uow.hosted_sessions.add(hosted)
        await uow.commit()
    return hosted


async def test_a_limited_code_purge_deletes_at_most_the_limit(storage: Storage, make: Make) -> None:
    await _alice(storage, make)
    live = await _codes(storage, expired=5)
    deleted = []
    for _ in range(4):
        async with storage.begin() as uow:
            deleted.append(await uow.codes.purge_expired(NOW, 2))
            await uow.commit()
    assert deleted == [2, 2, 1, 0]
    async with storage.begin() as uow:
        assert await uow.codes.take(live, NOW) is not None


async def test_a_limited_hosted_session_purge_keeps_the_live_one(
    storage: Storage, make: Make
) -> None:
    await _alice(storage, make)
    live = await _hosted_sessions(storage, make, expired=3)
    deleted = []
    for _ in range(3):
        async with storage.begin() as uow:
            deleted.append(await uow.hosted_sessions.purge_expired(NOW, 2))
            await uow.commit()
    assert deleted == [2, 1, 0]
    async with storage.read() as uow:
        assert await uow.hosted_sessions.find(live.id_hash, NOW) == live


async def test_housekeeping_drains_codes_and_hosted_sessions_in_batches(
    storage: Storage, make: Make
) -> None:
    """Seven expired codes and seven expired hosted sessions, whose ``sessions`` rows end with
    them, purged in batches of three; the live code, hosted session and its row stay."""
    await _alice(storage, make)
    live_code = await _codes(storage, expired=7)
    live = await _hosted_sessions(storage, make, expired=7)
    purge = PurgeExpired(storage, FakeClock(NOW), Live(AuditSettings()), batch=3)
    assert await purge() == 7 + 7 + 7  # codes, hosted sessions, their sessions rows
    async with storage.begin() as uow:
        assert await uow.hosted_sessions.find(live.id_hash, NOW) == live
        assert [s.id for s in await uow.sessions.list_live("alice", NOW)] == [live.session_id]
        assert await uow.codes.take(live_code, NOW) is not None
    assert await purge() == 0


def _flow(n: int, expires_at: datetime, link_user_id: str | None = None) -> FederationFlow:
    return FederationFlow(f"{n:064x}", "test", "b" * 64, "nonce", "v" * 43, "/ui/account",
                          link_user_id, T0, expires_at)  # fmt: skip


async def test_housekeeping_drains_expired_federation_flows_in_batches(
    storage: Storage, make: Make
) -> None:
    """docs/reference/federation.md (UP-03's ``state`` records): seven started federated logins past
    their ``expires_at`` (one of them a link by alice): a purge limited to two deletes two, then
    housekeeping the other five in batches of three; the live one
    stays and can still be taken once."""
    async with storage.begin() as uow:
        await uow.users.add(make.user(id="alice"))
        for n in range(7):
            await uow.identities.put_flow(
                _flow(n, NOW - timedelta(seconds=1), "alice" if n == 0 else None)
            )
        await uow.identities.put_flow(_flow(99, NOW + timedelta(seconds=1)))
        await uow.commit()
    async with storage.begin() as uow:  # the port's limit bounds one statement
        assert await uow.identities.purge_expired(NOW, 2) == 2
        await uow.commit()
    purge = PurgeExpired(storage, FakeClock(NOW), Live(AuditSettings()), batch=3)
    assert await purge() == 5
    assert await purge() == 0
    async with storage.begin() as uow:
        assert await uow.identities.take_flow(f"{0:064x}", "b" * 64) is None
        live = await uow.identities.take_flow(f"{99:064x}", "b" * 64)
        await uow.commit()
    assert live == _flow(99, NOW + timedelta(seconds=1))


async def test_housekeeping_drains_webhook_tries_past_the_delivery_retention(
    storage: Storage,
) -> None:
    """docs/reference/webhooks.md: seven tries older than the retention (one day here) go in
    batches of three; a try just inside it and the endpoint stay; without the setting given,
    the log is not touched."""
    retention = 86_400
    hook = Webhook("w1", "org-a", "https://hooks.example.com/w1", ("group.created",), "", True,
                   b"sealed", T0, T0)  # fmt: skip
    old = NOW - timedelta(seconds=retention + 1)
    recent = NOW - timedelta(seconds=retention - 1)
    async with storage.begin() as uow:
        await uow.webhooks.add(hook)
        for n, at in enumerate([old] * 7 + [recent]):
            await uow.webhooks.record_delivery(WebhookDelivery(
                f"d{n:03d}", "w1", f"m{n}", "group.created", 1, at, 200, None))  # fmt: skip
        await uow.commit()
    assert await PurgeExpired(storage, FakeClock(NOW), Live(AuditSettings()), batch=3)() == 0
    purge = PurgeExpired(storage, FakeClock(NOW), Live(AuditSettings()),
                         delivery_retention=lambda: retention, batch=3)  # fmt: skip
    assert await purge() == 7
    assert await purge() == 0
    async with storage.read() as uow:
        assert [d.id for d in await uow.webhooks.deliveries("w1", None, 10)] == ["d007"]
        assert await uow.webhooks.get("w1") == hook
