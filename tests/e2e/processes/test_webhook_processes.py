"""Webhooks across real ``authsvc serve`` processes over one PostgreSQL schema
(docs/reference/webhooks.md; docs/adr/0052-webhooks-on-the-outbox.md): three instances deliver
each event once between them, every message verified with ``standardwebhooks``; an instance
SIGKILLed right after the commit of an audited change loses no message — the next start
delivers them.

The org_admin's role is set through the storage port; the endpoints and the audited changes
(``POST /groups``) go over HTTP, so the messages are queued by the serving processes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import attrs
import pytest
from standardwebhooks.webhooks import WebhookVerificationError

from adapters.persistence.postgres import PostgresStorage
from domain.model import Role
from tests.brokers import new_kek
from tests.e2e.servers import Server
from tests.e2e.webhook_receiver import Received, Receiver, verified
from tests.pg import PG_SKIP_REASON, drop_pg_schema, new_schema_name, pg_dsn

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

PASSWORD = "correct horse battery"
ADMIN = "admin@example.com"


@pytest.fixture
def deployment_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """One schema, one key-encryption key: the environment of every instance; the receiver
    is on 127.0.0.1, so private targets are allowed."""
    dsn = pg_dsn()
    if dsn is None:
        pytest.skip(PG_SKIP_REASON)
    schema = new_schema_name("authsvc_webhooks")
    try:
        yield {
            "AUTHSVC_AUTH__BCRYPT_ROUNDS": "4",
            "AUTHSVC_AUTH__KEY_ENCRYPTION_KEY": new_kek(),
            "AUTHSVC_AUTH__KEY_DIR": str(tmp_path / "keys"),
            "AUTHSVC_STORAGE__BACKEND": "postgres",
            "AUTHSVC_STORAGE__POSTGRES_DSN": dsn,
            "AUTHSVC_STORAGE__POSTGRES_SCHEMA": schema,
            "AUTHSVC_WEBHOOKS__ALLOW_PRIVATE_TARGETS": "true",
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


async def _admin(env: dict[str, str], base: str) -> str:
    """An org_admin registered over HTTP (its role set through the port); its access token."""
    status, user = await _call(base, "POST", "/register", {"email": ADMIN, "password": PASSWORD})
    assert status == 201, user
    storage = PostgresStorage(
        env["AUTHSVC_STORAGE__POSTGRES_DSN"], 1, 2, schema=env["AUTHSVC_STORAGE__POSTGRES_SCHEMA"]
    )
    await storage.open()
    try:
        async with storage.begin() as uow:
            found = await uow.users.get(user["id"])
            assert found is not None
            await uow.users.update(attrs.evolve(found, role=Role.ORG_ADMIN))
            await uow.commit()
    finally:
        await storage.close()
    status, pair = await _call(base, "POST", "/login", {"email": ADMIN, "password": PASSWORD})
    assert status == 200, pair
    return str(pair["access_token"])


async def _endpoint(base: str, token: str, url: str) -> str:
    """A new endpoint subscribed to ``group.created``; its secret."""
    body = {"url": url, "event_types": ["group.created"]}
    status, made = await _call(base, "POST", "/webhooks", body, token)
    assert status == 201, made
    return str(made["secret"])


def _verified_by_one(secrets: list[str], got: Received) -> dict[str, Any]:
    """The message, verified by exactly one of ``secrets``."""
    messages = []
    for secret in secrets:
        try:
            messages.append(verified(secret, got))
        except WebhookVerificationError:
            continue
    assert len(messages) == 1
    return messages[0]


async def test_three_instances_deliver_each_event_once(
    deployment_env: dict[str, str], receiver: Receiver
) -> None:
    url = await receiver.start()
    servers = [Server(deployment_env)]  # the first creates the schema and the key
    servers += [Server(deployment_env) for _ in range(2)]
    try:
        token = await _admin(deployment_env, servers[0].base)
        secret = await _endpoint(servers[1].base, token, url)
        groups = []
        for n in range(30):
            base = servers[n % 3].base
            status, group = await _call(base, "POST", "/groups", {"name": f"g{n:02d}"}, token)
            assert status == 201, group
            groups.append(group["id"])
        taken = await receiver.wait_for(30, timeout=30)
        await asyncio.sleep(2)  # a second delivery of any would arrive within a round or two
        assert len(receiver.taken) == 30 and receiver.refused == []
        messages = [verified(secret, got) for got in taken]
        assert sorted(m["data"]["details"]["group_id"] for m in messages) == sorted(groups)
        assert len({got.headers["webhook-id"] for got in taken}) == 30
    finally:
        for server in servers:
            server.stop()


async def test_a_kill_right_after_the_commit_loses_no_message(
    deployment_env: dict[str, str], receiver: Receiver
) -> None:
    url = await receiver.start()
    first = Server(deployment_env)
    try:
        token = await _admin(deployment_env, first.base)
        secrets = [await _endpoint(first.base, token, url) for _ in range(5)]
        status, group = await _call(first.base, "POST", "/groups", {"name": "ops"}, token)
        first.kill()  # SIGKILL as soon as the group and its five messages committed
        assert status == 201, group
    finally:
        first.stop()
    delivered_before = len(receiver.taken)
    second = Server(deployment_env)
    try:
        taken = await receiver.wait_for(5, timeout=90)
        messages = [_verified_by_one(secrets, got) for got in taken]
        assert {m["data"]["details"]["group_id"] for m in messages} == {group["id"]}
        assert delivered_before < 5  # the kill did cut the delivery short
    finally:
        second.stop()
