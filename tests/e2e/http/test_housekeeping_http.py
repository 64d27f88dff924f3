"""The server purges expired tokens on its own every ``storage.purge_interval`` seconds."""

from __future__ import annotations

import asyncio

import pytest

from application.sessions.tokens import hash_refresh_token
from tests.e2e.helpers import MakeClient, container_of, register_and_login


@pytest.fixture
def deployment() -> tuple[str, str]:
    """SQLite is enough: the purge itself is covered over every backend by the contract suite."""
    return ("sqlite", "RS256")


async def test_expired_tokens_are_purged_while_serving(make_client: MakeClient) -> None:
    client = await make_client(
        {"AUTHSVC_STORAGE__PURGE_INTERVAL": "1", "AUTHSVC_AUTH__REFRESH_TOKEN_TTL": "1"}
    )
    pair = await register_and_login(client)
    storage = container_of(client).storage()

    async def stored() -> bool:
        async with storage.begin() as uow:
            return await uow.tokens.find(hash_refresh_token(pair["refresh_token"])) is not None

    assert await stored()
    for _ in range(40):  # the token expires after 1 s; the next round (every 1 s) removes it
        await asyncio.sleep(0.1)
        if not await stored():
            break
    assert not await stored()
