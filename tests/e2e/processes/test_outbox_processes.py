"""The durable outbox across real ``authsvc serve`` processes over one PostgreSQL schema
(docs/adr/0049-durable-outbox.md; back-channel logout, docs/reference/oauth-and-oidc.md):
three instances deliver each logout token once between them; an instance SIGKILLed right
after the commit that ended the sessions loses none — the next start delivers them.

The relying party's sessions (token families with the ``sid`` of their ID tokens) and its
client record are written through the storage port; the sessions end over HTTP
(``DELETE /me/sessions``), so the items are queued by the serving process itself."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from adapters.persistence.postgres import PostgresStorage
from domain.clients import Client
from domain.model import Session
from tests.brokers import new_kek
from tests.e2e.backchannel_receiver import Receiver, verified_logout_token
from tests.e2e.servers import Server
from tests.pg import PG_SKIP_REASON, drop_pg_schema, new_schema_name, pg_dsn

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

PASSWORD = "correct horse battery"
ALICE = "alice@example.com"


@pytest.fixture
def deployment_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """One schema, one key-encryption key: the environment of every instance."""
    dsn = pg_dsn()
    if dsn is None:
        pytest.skip(PG_SKIP_REASON)
    schema = new_schema_name("authsvc_outbox")
    try:
        yield {
            "AUTHSVC_AUTH__BCRYPT_ROUNDS": "4",
            "AUTHSVC_AUTH__KEY_ENCRYPTION_KEY": new_kek(),
            "AUTHSVC_AUTH__KEY_DIR": str(tmp_path / "keys"),
            "AUTHSVC_STORAGE__BACKEND": "postgres",
            "AUTHSVC_STORAGE__POSTGRES_DSN": dsn,
            "AUTHSVC_STORAGE__POSTGRES_SCHEMA": schema,
        }
    finally:
        drop_pg_schema(dsn, schema)


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    made = Receiver()
    yield made
    await made.close()


async def _call(base: str, method: str, path: str, body: Any = None,
                token: str | None = None) -> tuple[int, Any]:  # fmt: skip
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        aiohttp.ClientSession() as session,
        session.request(method, base + path, json=body, headers=headers) as resp,
    ):
        text = await resp.text()
        return resp.status, (json.loads(text) if text else None)


async def _alice_with_sessions(
    env: dict[str, str], base: str, uri: str, count: int
) -> tuple[str, str, list[str]]:
    """alice registered and logged in over HTTP; a relying party with ``uri``; ``count``
    token families of that party, each from its own login (``sid``). Returns (alice's access
    token, the client id, the sids)."""
    status, user = await _call(base, "POST", "/register", {"email": ALICE, "password": PASSWORD})
    assert status == 201, user
    status, pair = await _call(base, "POST", "/login", {"email": ALICE, "password": PASSWORD})
    assert status == 200, pair
    now = datetime.now(UTC)
    rp = Client(
        id="rp-" + os.urandom(6).hex(), name="RP", org_id="default", scopes=(),
        audience=("authsvc",), require_dpop=False, disabled=False, created_at=now,
        secret_hash="x" * 64, grant_types=("authorization_code",),
        redirect_uris=("https://rp.example/cb",), backchannel_logout_uri=uri,
        backchannel_logout_session_required=True,
    )  # fmt: skip
    sids = [f"login-{n:03d}" for n in range(count)]
    storage = PostgresStorage(
        env["AUTHSVC_STORAGE__POSTGRES_DSN"], 1, 2, schema=env["AUTHSVC_STORAGE__POSTGRES_SCHEMA"]
    )
    await storage.open()
    try:
        async with storage.begin() as uow:
            await uow.clients.add(rp)
            for n, sid in enumerate(sids):
                await uow.sessions.add(Session(
                    id=f"family-{n:03d}", user_id=user["id"], created_at=now, last_used_at=now,
                    expires_at=now + timedelta(days=1), client_id=rp.id, sid=sid,
                ))  # fmt: skip
            await uow.commit()
    finally:
        await storage.close()
    return pair["access_token"], rp.id, sids


async def _verified_sids(base: str, tokens: list[str], client_id: str) -> list[str]:
    async with aiohttp.ClientSession(base_url=base) as session:
        client: Any = _Jwks(session)
        return sorted([(await verified_logout_token(client, t, client_id))["sid"] for t in tokens])


class _Jwks:
    """Enough of a ``TestClient`` for ``verified_logout_token``: ``get`` on the server."""

    def __init__(self, session: aiohttp.ClientSession) -> None:
        self._session = session

    async def get(self, path: str) -> aiohttp.ClientResponse:
        return await self._session.get(path)


async def test_three_instances_deliver_each_logout_token_once(
    deployment_env: dict[str, str], receiver: Receiver
) -> None:
    uri = await receiver.start()
    servers = [Server(deployment_env)]  # the first creates the schema and the key
    servers += [Server(deployment_env) for _ in range(2)]
    try:
        base = servers[1].base
        token, client_id, sids = await _alice_with_sessions(deployment_env, base, uri, 30)
        assert (await _call(base, "DELETE", "/me/sessions", token=token))[0] == 204
        tokens = await receiver.wait_for(30, timeout=30)
        await asyncio.sleep(2)  # a second delivery of any would arrive within a round or two
        assert len(receiver.tokens) == 30 and receiver.refused == []
        assert await _verified_sids(servers[0].base, tokens, client_id) == sids
    finally:
        for server in servers:
            server.stop()


async def test_a_kill_right_after_the_commit_loses_no_logout_token(
    deployment_env: dict[str, str], receiver: Receiver
) -> None:
    uri = await receiver.start()
    first = Server(deployment_env)
    try:
        token, client_id, sids = await _alice_with_sessions(deployment_env, first.base, uri, 5)
        status, _ = await _call(first.base, "DELETE", "/me/sessions", token=token)
        first.kill()  # SIGKILL as soon as the sessions' end committed
        assert status == 204
    finally:
        first.stop()
    delivered_before = len(receiver.tokens)
    second = Server(deployment_env)
    try:
        tokens = await receiver.wait_for(5, timeout=30)
        assert await _verified_sids(second.base, tokens, client_id) == sids
        assert delivered_before < 5  # the kill did cut the delivery short
    finally:
        second.stop()
