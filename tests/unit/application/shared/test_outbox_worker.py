"""The outbox's delivery worker with the back-channel logout handler, over memory storage and a
fake clock (docs/adr/0049-durable-outbox.md; docs/reference/oauth-and-oidc.md): a receiver that
fails is tried again 2, 4, 8 … s later (never sooner) until the retry window ends, then the
notice is given up and audited; a client gone is given up at once; a delivered notice is
deleted and audited; the token carries the item's id as ``jti``, the same on every try."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs

import attrs
import pytest

from adapters.events.inprocess import InProcessEventBus
from adapters.persistence.memory import MemoryStorage
from application.oauth.backchannel import LOGOUT_TOKEN_TYPE, BackchannelLogoutDelivery
from application.oauth.settings import OidcSettings
from application.ports import DeliveryFailed
from application.shared.outbox import DeliverOutbox
from application.shared.settings import AuthSettings, Live
from domain.audit import AuditQuery
from domain.clients import Client
from domain.outbox import OutboxItem, OutboxKind
from tests.fakes import FakeClock


@attrs.define
class FakeSigner:
    """Signs as ``alg.typ.claims`` (JSON): enough to read back what was signed."""

    def signing_algorithm(self, alg: str | None) -> str:
        return alg or "RS256"

    async def sign(self, claims: Mapping[str, Any], *, typ: str = "JWT",
                   alg: str | None = None) -> str:  # fmt: skip
        return f"{alg}|{typ}|{json.dumps(dict(claims), sort_keys=True)}"


@attrs.define
class FakeSender:
    """Answers ``statuses`` in turn (an exception instance is raised), then 200."""

    statuses: list[Any] = attrs.Factory(list)
    posts: list[tuple[str, bytes, dict[str, str]]] = attrs.Factory(list)

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> int:
        self.posts.append((url, body, dict(headers)))
        answer = self.statuses.pop(0) if self.statuses else 200
        if isinstance(answer, Exception):
            raise answer
        return int(answer)


@attrs.define
class World:
    storage: MemoryStorage
    clock: FakeClock
    sender: FakeSender
    deliver: DeliverOutbox

    async def queue(self, client_id: str = "rp") -> OutboxItem:
        now = self.clock.now()
        item = OutboxItem("item-1", OutboxKind.BACKCHANNEL_LOGOUT,
                          {"client_id": client_id, "user_id": "alice", "sid": "login-1"},
                          now, now)  # fmt: skip
        async with self.storage.begin() as uow:
            await uow.outbox.add(item)
            await uow.commit()
        return item

    async def item(self) -> OutboxItem | None:
        async with self.storage.read() as uow:
            return await uow.outbox.get("item-1")

    async def audit(self, kind: str) -> list[Any]:
        async with self.storage.read() as uow:
            return await uow.audit.list_page(AuditQuery(type=kind), None, 10)

    def token_claims(self, n: int) -> tuple[str, dict[str, Any]]:
        form = parse_qs(self.sender.posts[n][1].decode())
        _, typ, claims = form["logout_token"][0].split("|", 2)
        return typ, json.loads(claims)


@pytest.fixture
async def world() -> World:
    storage, clock, sender = MemoryStorage(), FakeClock(), FakeSender()
    auth = Live(AuthSettings(issuer="https://id.example"))
    handler = BackchannelLogoutDelivery(
        storage, FakeSigner(), sender, clock, auth, Live(OidcSettings(backchannel_retry_window=60))
    )  # type: ignore[arg-type]
    deliver = DeliverOutbox(storage, InProcessEventBus(), clock,
                            {OutboxKind.BACKCHANNEL_LOGOUT: handler})  # fmt: skip
    rp = Client(
        id="rp", name="RP", org_id="default", scopes=(), audience=("authsvc",),
        require_dpop=False, disabled=False, created_at=clock.now(), secret_hash="x",
        backchannel_logout_uri="https://rp.example/logout",
    )  # fmt: skip
    async with storage.begin() as uow:
        await uow.clients.add(rp)
        await uow.commit()
    return World(storage, clock, sender, deliver)


async def test_a_failing_receiver_is_retried_with_backoff_then_given_up(world: World) -> None:
    world.sender.statuses = [503, DeliveryFailed("connection: timeout"), 500, 502, 503, 504, 500]
    start = world.clock.now()
    await world.queue()
    tried_at: list[float] = []
    for _ in range(120):  # one round a second, as the serving process runs them
        if await world.deliver():
            tried_at.append((world.clock.now() - start).total_seconds())
        if await world.item() is None:
            break
        world.clock.advance(1)
    assert tried_at == [0, 2, 6, 14, 30]  # 2, 4, 8, 16 s apart; the next (+32) is past 60 s
    [row] = await world.audit("oidc.backchannel_logout_failed")
    assert row.details_dict() == {"client_id": "rp", "session_id": "login-1",
                                  "reason": "retry_window"}  # fmt: skip
    assert await world.audit("oidc.backchannel_logout_sent") == []
    jtis = {world.token_claims(n)[1]["jti"] for n in range(5)}
    assert jtis == {"item-1"}


async def test_a_delivered_notice_is_deleted_and_audited(world: World) -> None:
    world.sender.statuses = [503]
    await world.queue()
    assert await world.deliver() == 1
    found = await world.item()
    assert found is not None and found.attempts == 1 and found.last_error == "status 503"
    world.clock.advance(1)
    assert await world.deliver() == 0  # not due before 2 s
    world.clock.advance(1)
    assert await world.deliver() == 1
    assert await world.item() is None
    [row] = await world.audit("oidc.backchannel_logout_sent")
    assert row.details_dict()["attempts"] == 2
    url, _, headers = world.sender.posts[1]
    assert url == "https://rp.example/logout"
    assert headers == {"Content-Type": "application/x-www-form-urlencoded"}
    typ, claims = world.token_claims(1)
    assert typ == LOGOUT_TOKEN_TYPE
    assert claims["events"] == {"http://schemas.openid.net/event/backchannel-logout": {}}
    assert (claims["iss"], claims["aud"], claims["sub"], claims["sid"]) == (
        "https://id.example", "rp", "alice", "login-1",
    )  # fmt: skip
    assert "nonce" not in claims and claims["exp"] - claims["iat"] == 120


async def test_a_notice_for_a_client_gone_is_given_up_at_once(world: World) -> None:
    await world.queue(client_id="deleted-client")
    assert await world.deliver() == 1
    assert await world.item() is None
    assert world.sender.posts == []
    [row] = await world.audit("oidc.backchannel_logout_failed")
    assert row.details_dict()["reason"] == "client_gone"
