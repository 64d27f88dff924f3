"""Contract of ``PushedRequestStore`` (RFC 9126; docs/reference/oauth-and-oidc.md) over every
storage adapter — a pushed request round trips with its parameters in order, is taken once (also
under concurrency), not after its expiry, goes with its client and is purged — and the client
fields of PAR and ``private_key_jwt`` round trip."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import attrs
import pytest

from application.ports import Storage
from domain.clients import Client
from domain.errors import Conflict, NotFound
from domain.pushed import PushedRequest
from tests.factories import T0, StorageFactory

CLIENT = "c" * 32
PAIRS = (("response_type", "code"), ("scope", "openid email"), ("state", "ä&=x"),
         ("scope2", ""))  # fmt: skip


def _client(**kw: object) -> Client:
    client = Client(
        CLIENT, "web", "org-a", ("read",), ("aud",), False, False, T0, "a" * 64,
        grant_types=("authorization_code",), redirect_uris=("https://app.example/cb",),
        token_endpoint_auth_method="private_key_jwt", require_pushed_authorization_requests=True,
        jwks='{"keys":[{"kty":"EC","crv":"P-256","x":"x","y":"y"}]}',
    )  # fmt: skip
    return attrs.evolve(client, **kw)  # type: ignore[arg-type]


def _pushed(uri_hash: str = "p" * 64, **kw: object) -> PushedRequest:
    pushed = PushedRequest(uri_hash, CLIENT, PAIRS, T0, T0 + timedelta(seconds=60))
    return attrs.evolve(pushed, **kw)  # type: ignore[arg-type]


async def _setup(storage: Storage, *pushed: PushedRequest) -> None:
    async with storage.begin() as uow:
        await uow.clients.add(_client())
        for one in pushed:
            await uow.pushed_requests.add(one)
        await uow.commit()


async def test_the_par_and_private_key_jwt_client_fields_round_trip(storage: Storage) -> None:
    async with storage.begin() as uow:
        await uow.clients.add(_client())
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.clients.get(CLIENT) == _client()
        changed = _client(require_pushed_authorization_requests=False, jwks=None,
                          jwks_uri="https://app.example/jwks")  # fmt: skip
        await uow.clients.update(changed)
        await uow.commit()
    async with storage.read() as uow:
        assert await uow.clients.get(CLIENT) == changed


async def test_a_pushed_request_is_taken_once_with_its_parameters(storage: Storage) -> None:
    pushed = _pushed()
    await _setup(storage, pushed)
    async with storage.begin() as uow:
        with pytest.raises(Conflict):
            await uow.pushed_requests.add(pushed)
    async with storage.begin() as uow:
        assert await uow.pushed_requests.take(pushed.uri_hash, T0) == pushed
        assert await uow.pushed_requests.take(pushed.uri_hash, T0) is None
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.pushed_requests.take(pushed.uri_hash, T0) is None
        with pytest.raises(NotFound):
            await uow.pushed_requests.add(_pushed("q" * 64, client_id="d" * 32))


async def test_an_expired_request_is_not_taken_and_is_purged(storage: Storage) -> None:
    old, live = _pushed(), _pushed("q" * 64, expires_at=T0 + timedelta(seconds=120))
    await _setup(storage, old, live)
    at = T0 + timedelta(seconds=60)
    async with storage.begin() as uow:
        assert await uow.pushed_requests.take(old.uri_hash, at) is None
        assert await uow.pushed_requests.purge_expired(at) == 1
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.pushed_requests.take(live.uri_hash, at) == live


async def test_concurrent_takes_get_it_once(storage: Storage, open_peer: StorageFactory) -> None:
    peer = await open_peer()
    pushed = _pushed()
    await _setup(storage, pushed)

    async def take(store: Storage) -> bool:
        async with store.begin() as uow:
            got = await uow.pushed_requests.take(pushed.uri_hash, T0)
            await asyncio.sleep(0.01)
            await uow.commit()
        return got is not None

    assert sum(await asyncio.gather(*(take(s) for s in [storage, peer] * 4))) == 1


async def test_a_pushed_request_goes_with_its_client(storage: Storage) -> None:
    pushed = _pushed()
    await _setup(storage, pushed)
    async with storage.begin() as uow:
        assert await uow.clients.delete(CLIENT)
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.pushed_requests.take(pushed.uri_hash, T0) is None
