"""POST /actuator/refresh: authorization, reloader outcomes, problem bodies."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from service_actuator import (
    AccessDenied,
    Actuator,
    ActuatorSettings,
    AuthenticationRequired,
    InvalidConfiguration,
    RefreshResult,
)
from tests.actuator.fakes import ADMIN, VIEWER, bearer_authorizer


class FakeConfig:
    """A reloader that 'reads' the next configuration from ``pending`` and applies it."""

    def __init__(self, actuator_holder: list[Actuator] | None = None) -> None:
        self.calls = 0
        self.pending: dict[str, Any] = {}
        self.holder = actuator_holder

    async def reload(self) -> RefreshResult:
        self.calls += 1
        if "actuator" in self.pending and self.holder:
            self.holder[0].apply_settings(ActuatorSettings.from_mapping(self.pending["actuator"]))
        changed = sorted(k for k in self.pending if k not in {"server", "storage"})
        restart = sorted(k for k in self.pending if k in {"server", "storage"})
        self.pending = {}
        return RefreshResult(changed=changed, restart_required=restart)


def assert_problem(body: dict[str, Any], status: int, code: str) -> None:
    assert body["type"] == "about:blank"
    assert body["status"] == status
    assert body["code"] == code
    assert isinstance(body["title"], str) and body["title"]
    assert isinstance(body["detail"], str) and body["detail"]


async def test_refresh_ok(actuator_client: Any) -> None:
    config = FakeConfig()
    config.pending = {"auth": {}, "storage": {}}
    client = await actuator_client(reloader=config.reload, authorizer=bearer_authorizer)
    response = await client.post("/actuator/refresh", headers=ADMIN)
    assert response.status == 200
    assert await response.json() == {"changed": ["auth"], "restart_required": ["storage"]}
    nothing = await client.post("/actuator/refresh", headers=ADMIN)
    assert await nothing.json() == {"changed": [], "restart_required": []}
    assert config.calls == 2


async def test_refresh_applies_actuator_settings_to_next_request(actuator_client: Any) -> None:
    holder: list[Actuator] = []
    config = FakeConfig(holder)
    client = await actuator_client(
        settings=ActuatorSettings(show_details="never"),
        reloader=config.reload,
        authorizer=bearer_authorizer,
    )
    from service_actuator.aiohttp import ACTUATOR_KEY

    holder.append(client.app[ACTUATOR_KEY])
    assert await (await client.get("/actuator/health")).json() == {"status": "UP"}
    config.pending = {"actuator": {"show_details": "always"}}
    response = await client.post("/actuator/refresh", headers=ADMIN)
    assert await response.json() == {"changed": ["actuator"], "restart_required": []}
    assert await (await client.get("/actuator/health")).json() == {
        "status": "UP",
        "components": {},
    }


async def test_sync_reloader(actuator_client: Any) -> None:
    client = await actuator_client(
        reloader=lambda: RefreshResult(changed=["auth"]), authorizer=bearer_authorizer
    )
    response = await client.post("/actuator/refresh", headers=ADMIN)
    assert await response.json() == {"changed": ["auth"], "restart_required": []}


@pytest.mark.parametrize(
    "error",
    [
        InvalidConfiguration("auth.access_token_ttl", "must be a positive integer"),
        # ActuatorSettings' own validation error is an InvalidConfiguration too
        pytest.param(None, id="invalid-actuator-setting"),
    ],
)
async def test_invalid_configuration_is_422_naming_the_key(
    actuator_client: Any, error: InvalidConfiguration | None
) -> None:
    def reloader() -> RefreshResult:
        if error is not None:
            raise error
        ActuatorSettings.from_mapping({"indicator_timeout": -1})
        return RefreshResult()

    client = await actuator_client(reloader=reloader, authorizer=bearer_authorizer)
    response = await client.post("/actuator/refresh", headers=ADMIN)
    assert response.status == 422
    assert response.headers["Content-Type"] == "application/problem+json"
    body = await response.json(content_type=None)
    assert_problem(body, 422, "invalid_configuration")
    key = error.key if error else "actuator.indicator_timeout"
    assert body["key"] == key
    assert key in body["detail"]
    assert body["errors"][0]["field"] == key


@pytest.mark.parametrize(
    ("headers", "status", "code"),
    [({}, 401, "invalid_token"), ({"Authorization": "Bearer junk"}, 401, "invalid_token")],
)
async def test_unauthenticated_is_401(
    actuator_client: Any, headers: dict[str, str], status: int, code: str
) -> None:
    config = FakeConfig()
    client = await actuator_client(reloader=config.reload, authorizer=bearer_authorizer)
    response = await client.post("/actuator/refresh", headers=headers)
    assert response.status == status
    assert response.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'
    assert response.headers["Content-Type"] == "application/problem+json"
    assert_problem(await response.json(content_type=None), status, code)
    assert config.calls == 0


async def test_forbidden_is_403(actuator_client: Any) -> None:
    config = FakeConfig()
    client = await actuator_client(reloader=config.reload, authorizer=bearer_authorizer)
    response = await client.post("/actuator/refresh", headers=VIEWER)
    assert response.status == 403
    assert "WWW-Authenticate" not in response.headers
    assert_problem(await response.json(content_type=None), 403, "forbidden")
    assert config.calls == 0


@pytest.mark.parametrize(
    ("authorizer", "status"),
    [
        (lambda request, action: True, 200),
        (lambda request, action: False, 401),
        (lambda request, action: "forbidden", 403),
    ],
)
async def test_bool_and_string_verdicts(actuator_client: Any, authorizer: Any, status: int) -> None:
    client = await actuator_client(reloader=RefreshResult, authorizer=authorizer)
    assert (await client.post("/actuator/refresh")).status == status


@pytest.mark.parametrize(
    ("exc", "status"), [(AuthenticationRequired("expired"), 401), (AccessDenied("viewer"), 403)]
)
async def test_authorizer_may_raise(actuator_client: Any, exc: Exception, status: int) -> None:
    async def authorizer(request: Any, action: str) -> bool:
        assert action == "refresh"
        raise exc

    client = await actuator_client(reloader=RefreshResult, authorizer=authorizer)
    assert (await client.post("/actuator/refresh")).status == status


async def test_no_authorizer_refuses(actuator_client: Any) -> None:
    config = FakeConfig()
    client = await actuator_client(reloader=config.reload)
    response = await client.post("/actuator/refresh", headers=ADMIN)
    assert response.status == 403
    assert config.calls == 0


async def test_no_reloader_is_501(actuator_client: Any) -> None:
    client = await actuator_client(authorizer=bearer_authorizer)
    response = await client.post("/actuator/refresh", headers=ADMIN)
    assert response.status == 501
    assert_problem(await response.json(content_type=None), 501, "refresh_unavailable")


async def test_get_is_405(actuator_client: Any) -> None:
    client = await actuator_client(reloader=RefreshResult, authorizer=bearer_authorizer)
    assert (await client.get("/actuator/refresh", headers=ADMIN)).status == 405


async def test_refreshes_are_serialised() -> None:
    running = 0
    overlap = False

    async def reloader() -> RefreshResult:
        nonlocal running, overlap
        running += 1
        overlap = overlap or running > 1
        await asyncio.sleep(0.05)
        running -= 1
        return RefreshResult()

    actuator = Actuator(reloader=reloader, authorizer=lambda r, a: True, environ={})
    responses = await asyncio.gather(*(actuator.refresh() for _ in range(3)))
    assert [r.status for r in responses] == [200, 200, 200]
    assert not overlap


async def test_reloader_returning_wrong_type_is_an_error() -> None:
    actuator = Actuator(reloader=lambda: {"changed": []}, environ={})  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError):
        await actuator.reload()
