"""The outbox's HTTP sender (adapters/http_sender.py; docs/adr/0049-durable-outbox.md): with the
server-side request forgery guard, a loopback, private or link-local target is refused before
any byte is sent — an IP literal at once, a name after its resolution (in the resolver the
connection uses) —; without it, the POST goes out; a redirect is answered, never followed."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from adapters.http_sender import AiohttpSender
from application.ports import DeliveryFailed
from tests.fakes import FixedResolver

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture
async def receiver() -> AsyncIterator[tuple[TestServer, list[bytes]]]:
    bodies: list[bytes] = []

    async def take(request: web.Request) -> web.Response:
        bodies.append(await request.read())
        return web.Response(status=204)

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPFound("/take")

    app = web.Application()
    app.router.add_post("/take", take)
    app.router.add_post("/moved", moved)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    yield server, bodies
    await server.close()


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:9/x", "http://10.1.2.3/x", "http://169.254.169.254/latest/meta-data",
     "http://[::1]:9/x", "http://[::ffff:127.0.0.1]/x", "https://192.168.0.10/x"],
)  # fmt: skip
async def test_a_private_address_literal_is_refused_before_connecting(url: str) -> None:
    sender = AiohttpSender(allow_private=False)
    try:
        with pytest.raises(DeliveryFailed) as caught:
            await sender.post(url, b"x", FORM)
    finally:
        await sender.close()
    assert caught.value.refused is True


@pytest.mark.parametrize("address", ["127.0.0.1", "10.0.0.7", "169.254.169.254", "::1"])
async def test_a_name_resolving_to_a_private_address_is_refused(
    address: str, receiver: tuple[TestServer, list[bytes]]
) -> None:
    server, bodies = receiver
    resolver = FixedResolver(address)
    sender = AiohttpSender(allow_private=False, resolver=resolver)
    try:
        with pytest.raises(DeliveryFailed) as caught:
            await sender.post(f"http://rebind.example:{server.port}/take", b"x", FORM)
    finally:
        await sender.close()
    assert caught.value.refused is True
    assert resolver.asked == ["rebind.example"]
    assert bodies == []


async def test_without_the_guard_the_post_goes_out_and_a_redirect_is_not_followed(
    receiver: tuple[TestServer, list[bytes]],
) -> None:
    server, bodies = receiver
    sender = AiohttpSender(allow_private=True, resolver=FixedResolver("127.0.0.1"))
    try:
        assert await sender.post(f"http://rp.example:{server.port}/take", b"a=1", FORM) == 204
        assert await sender.post(str(server.make_url("/moved")), b"a=2", FORM) == 302
    finally:
        await sender.close()
    assert bodies == [b"a=1"]


async def test_an_unreachable_target_is_a_failed_delivery_not_a_refusal() -> None:
    sender = AiohttpSender(allow_private=True)
    try:
        with pytest.raises(DeliveryFailed) as caught:
            await sender.post("http://127.0.0.1:9/x", b"x", FORM)
    finally:
        await sender.close()
    assert caught.value.refused is False
