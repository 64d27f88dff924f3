"""Health, liveness and readiness: semantics, timeouts, concurrency, show_details."""

from __future__ import annotations

import time
from typing import Any

import pytest
from aiohttp import web

from service_actuator import (
    Actuator,
    ActuatorSettings,
    DuplicateIndicator,
    HealthCheck,
    HealthIndicator,
    Status,
)
from service_actuator.aiohttp import ACTUATOR_KEY
from tests.actuator.fakes import (
    ADMIN,
    VIEWER,
    AsyncIndicator,
    RaisingIndicator,
    SyncIndicator,
    bearer_authorizer,
)

ALWAYS = ActuatorSettings(show_details="always")


# ------------------------------------------------------------------ results of one check


@pytest.mark.parametrize(
    ("result", "status", "details"),
    [
        (True, "UP", {}),
        (None, "UP", {}),
        (False, "DOWN", {"error": "check returned False"}),
        ({}, "UP", {}),
        ({"status": "UP", "latency_ms": 3}, "UP", {"latency_ms": 3}),
        ({"status": "down", "reason": "disk full"}, "DOWN", {"reason": "disk full"}),
        ({"status": False, "reason": "x"}, "DOWN", {"reason": "x"}),
        ({"status": "UP", "details": {"version": "16"}}, "UP", {"version": "16"}),
        (
            {"status": "OUT_OF_SERVICE"},
            "DOWN",
            {"error": "check returned an unknown status 'OUT_OF_SERVICE'"},
        ),
        (42, "DOWN", {"error": "check returned an unsupported int"}),
    ],
)
@pytest.mark.parametrize("kind", [SyncIndicator, AsyncIndicator])
async def test_result_interpretation(
    kind: type[Any], result: object, status: str, details: dict[str, Any]
) -> None:
    actuator = Actuator(ALWAYS, indicators=[kind("probe", result)], environ={})
    report = await actuator.check_health()
    assert report.components["probe"].status == status
    assert dict(report.components["probe"].details) == details
    assert report.status == status


async def test_exception_is_down_with_class_and_message_not_traceback(
    actuator_client: Any,
) -> None:
    client = await actuator_client(settings=ALWAYS, indicators=[RaisingIndicator("db")])
    response = await client.get("/actuator/health")
    assert response.status == 503
    body = await response.json()
    assert body == {
        "status": "DOWN",
        "components": {
            "db": {"status": "DOWN", "details": {"error": "ConnectionRefusedError: db down"}}
        },
    }
    assert "Traceback" not in await response.text()


async def test_non_builtin_exception_is_qualified() -> None:
    class PoolExhausted(Exception):
        pass

    actuator = Actuator(
        ALWAYS, indicators=[RaisingIndicator("db", PoolExhausted("no connection"))], environ={}
    )
    report = await actuator.check_health()
    error = report.components["db"].details["error"]
    assert error.endswith("PoolExhausted: no connection")
    assert error.startswith(__name__)


async def test_overall_down_if_any_down_and_up_otherwise(actuator_client: Any) -> None:
    client = await actuator_client(
        settings=ALWAYS,
        indicators=[SyncIndicator("a"), AsyncIndicator("b", {"status": "DOWN"})],
    )
    response = await client.get("/actuator/health")
    assert response.status == 503
    body = await response.json()
    assert body["status"] == "DOWN"
    assert body["components"]["a"] == {"status": "UP", "details": {}}
    assert body["components"]["b"] == {"status": "DOWN", "details": {}}
    assert response.headers["Content-Type"].startswith("application/json")
    assert response.headers["Cache-Control"] == "no-store"


async def test_all_up(actuator_client: Any) -> None:
    client = await actuator_client(
        settings=ALWAYS, indicators=[SyncIndicator("a"), AsyncIndicator("b")]
    )
    response = await client.get("/actuator/health")
    assert response.status == 200
    assert (await response.json())["status"] == "UP"


async def test_no_indicators_is_up(actuator_client: Any) -> None:
    client = await actuator_client(settings=ALWAYS)
    response = await client.get("/actuator/health")
    assert response.status == 200
    assert await response.json() == {"status": "UP", "components": {}}


async def test_health_check_helper_and_protocol() -> None:
    async def ping() -> bool:
        return True

    check = HealthCheck("ping", ping)
    assert isinstance(check, HealthIndicator)
    assert isinstance(SyncIndicator("x"), HealthIndicator)
    sync_check = HealthCheck("lambda", lambda: {"status": "UP", "n": 1})
    actuator = Actuator(ALWAYS, indicators=[check, sync_check], environ={})
    report = await actuator.check_health()
    assert report.status is Status.UP
    assert report.components["lambda"].details == {"n": 1}


def test_duplicate_names_rejected() -> None:
    actuator = Actuator(indicators=[SyncIndicator("db")], environ={})
    with pytest.raises(DuplicateIndicator):
        actuator.add_indicator(AsyncIndicator("db"), readiness=True)


# ------------------------------------------------------------------ timeouts and concurrency


async def test_checks_run_concurrently(slow_sync_indicators: list[SyncIndicator]) -> None:
    first, second = SyncIndicator("first", delay=1.0), SyncIndicator("second", delay=1.0)
    slow_sync_indicators += [first, second]
    actuator = Actuator(
        ActuatorSettings(indicator_timeout=2.0),
        indicators=[first, second, AsyncIndicator("third", delay=1.0)],
        environ={},
    )
    started = time.monotonic()
    report = await actuator.check_health()
    elapsed = time.monotonic() - started
    assert report.status is Status.UP
    assert 0.9 <= elapsed < 1.6, elapsed


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_slow_check_times_out_without_delaying_others(
    kind: str, slow_sync_indicators: list[SyncIndicator], actuator_client: Any
) -> None:
    slow: Any
    if kind == "sync":
        slow = SyncIndicator("slow", delay=10.0)
        slow_sync_indicators.append(slow)
    else:
        slow = AsyncIndicator("slow", delay=10.0)
    client = await actuator_client(
        settings=ActuatorSettings(show_details="always", indicator_timeout=0.2),
        indicators=[slow, AsyncIndicator("fast"), SyncIndicator("fast_sync")],
    )
    started = time.monotonic()
    response = await client.get("/actuator/health")
    elapsed = time.monotonic() - started
    assert elapsed < 0.5, elapsed
    assert response.status == 503
    body = await response.json()
    assert body["components"]["slow"] == {
        "status": "DOWN",
        "details": {"error": "timed out after 0.2 s"},
    }
    assert body["components"]["fast"]["status"] == "UP"
    assert body["components"]["fast_sync"]["status"] == "UP"


async def test_sync_check_runs_off_the_event_loop(
    slow_sync_indicators: list[SyncIndicator],
) -> None:
    """A blocking check must not block an async one sharing the same run."""
    blocker = SyncIndicator("blocker", delay=0.5)
    slow_sync_indicators.append(blocker)
    ticks: list[float] = []

    async def ticker() -> bool:
        import asyncio

        for _ in range(4):
            ticks.append(time.monotonic())
            await asyncio.sleep(0.05)
        return True

    actuator = Actuator(indicators=[blocker, HealthCheck("ticker", ticker)], environ={})
    await actuator.check_health()
    assert len(ticks) == 4
    assert ticks[-1] - ticks[0] < 0.4


# ------------------------------------------------------------------ liveness and readiness


async def test_liveness_checks_nothing(actuator_client: Any) -> None:
    down = SyncIndicator("db", False)
    client = await actuator_client(settings=ALWAYS, readiness_indicators=[down])
    response = await client.get("/actuator/health/live")
    assert response.status == 200
    assert await response.json() == {"status": "UP"}
    assert down.calls == 0


async def test_readiness_covers_only_readiness_indicators(actuator_client: Any) -> None:
    client = await actuator_client(
        settings=ALWAYS,
        indicators=[SyncIndicator("cache", False)],
        readiness_indicators=[AsyncIndicator("database"), SyncIndicator("signing_key")],
    )
    ready = await client.get("/actuator/health/ready")
    assert ready.status == 200
    body = await ready.json()
    assert body["status"] == "UP"
    assert set(body["components"]) == {"database", "signing_key"}

    overall = await client.get("/actuator/health")
    assert overall.status == 503
    assert set((await overall.json())["components"]) == {"cache", "database", "signing_key"}


async def test_readiness_down(actuator_client: Any) -> None:
    client = await actuator_client(
        settings=ActuatorSettings(show_details="never"),
        readiness_indicators=[RaisingIndicator("database")],
    )
    response = await client.get("/actuator/health/ready")
    assert response.status == 503
    assert await response.json() == {"status": "DOWN"}


async def test_add_indicator_readiness_flag(actuator_client: Any) -> None:
    actuator = Actuator(ALWAYS, environ={})
    actuator.add_indicator(SyncIndicator("db"), readiness=True)
    actuator.add_indicator(SyncIndicator("mail"))
    assert set((await actuator.check_health(readiness=True)).components) == {"db"}
    assert set((await actuator.check_health()).components) == {"db", "mail"}


# ------------------------------------------------------------------ show_details


@pytest.mark.parametrize(
    ("settings", "headers", "expected"),
    [
        (ActuatorSettings(show_details="never"), ADMIN, {"status": "DOWN"}),
        (
            ActuatorSettings(show_details="always"),
            {},
            {
                "status": "DOWN",
                "components": {
                    "db": {"status": "UP", "details": {"pool": 5}},
                    "mq": {"status": "DOWN", "details": {"error": "check returned False"}},
                },
            },
        ),
        (ActuatorSettings(), {}, {"status": "DOWN"}),
        (ActuatorSettings(), VIEWER, {"status": "DOWN"}),
        (
            ActuatorSettings(),
            ADMIN,
            {
                "status": "DOWN",
                "components": {
                    "db": {"status": "UP", "details": {"pool": 5}},
                    "mq": {"status": "DOWN", "details": {"error": "check returned False"}},
                },
            },
        ),
        (
            ActuatorSettings(show_details="never", show_components="always"),
            {},
            {"status": "DOWN", "components": {"db": {"status": "UP"}, "mq": {"status": "DOWN"}}},
        ),
        (
            ActuatorSettings(show_details="when_authorized", show_components="always"),
            {},
            {"status": "DOWN", "components": {"db": {"status": "UP"}, "mq": {"status": "DOWN"}}},
        ),
        (
            ActuatorSettings(show_details="always", show_components="never"),
            ADMIN,
            {"status": "DOWN"},
        ),
    ],
)
async def test_show_details_modes(
    actuator_client: Any,
    settings: ActuatorSettings,
    headers: dict[str, str],
    expected: dict[str, Any],
) -> None:
    client = await actuator_client(
        settings=settings,
        indicators=[AsyncIndicator("db", {"status": "UP", "pool": 5}), SyncIndicator("mq", False)],
        authorizer=bearer_authorizer,
    )
    response = await client.get("/actuator/health", headers=headers)
    assert response.status == 503
    assert await response.json() == expected


async def test_when_authorized_without_authorizer_shows_nothing(actuator_client: Any) -> None:
    client = await actuator_client(indicators=[SyncIndicator("db")])
    response = await client.get("/actuator/health", headers=ADMIN)
    assert await response.json() == {"status": "UP"}


@pytest.mark.parametrize(
    "authorizer",
    [
        pytest.param(lambda request, action: True, id="sync-true"),
        pytest.param(lambda request, action: "ok", id="sync-str"),
    ],
)
async def test_authorizer_shapes(actuator_client: Any, authorizer: Any) -> None:
    client = await actuator_client(indicators=[SyncIndicator("db")], authorizer=authorizer)
    body = await (await client.get("/actuator/health")).json()
    assert body["components"]["db"] == {"status": "UP", "details": {}}


async def test_async_authorizer_gets_request_and_action(actuator_client: Any) -> None:
    seen: list[tuple[str, str]] = []

    async def authorizer(request: web.Request, action: str) -> bool:
        seen.append((request.path, action))
        return request.headers.get("X-Admin") == "1"

    client = await actuator_client(indicators=[SyncIndicator("db")], authorizer=authorizer)
    assert (
        "components"
        in await (await client.get("/actuator/health", headers={"X-Admin": "1"})).json()
    )
    assert "components" not in await (await client.get("/actuator/health")).json()
    assert seen == [("/actuator/health", "health_details")] * 2


async def test_failing_authorizer_hides_details(actuator_client: Any) -> None:
    def authorizer(request: Any, action: str) -> bool:
        raise RuntimeError("token service down")

    client = await actuator_client(indicators=[SyncIndicator("db")], authorizer=authorizer)
    response = await client.get("/actuator/health", headers=ADMIN)
    assert response.status == 200
    assert await response.json() == {"status": "UP"}


async def test_swapping_settings_applies_to_next_request(actuator_client: Any) -> None:
    client = await actuator_client(
        settings=ActuatorSettings(show_details="never"), indicators=[SyncIndicator("db")]
    )
    assert await (await client.get("/actuator/health")).json() == {"status": "UP"}
    actuator: Actuator = client.app[ACTUATOR_KEY]
    actuator.apply_settings(ActuatorSettings(show_details="always"))
    assert await (await client.get("/actuator/health")).json() == {
        "status": "UP",
        "components": {"db": {"status": "UP", "details": {}}},
    }


async def test_settings_callable_is_read_per_request(slow_sync_indicators: Any) -> None:
    current = {"settings": ActuatorSettings(indicator_timeout=5.0)}
    slow = SyncIndicator("slow", delay=2.0)
    slow_sync_indicators.append(slow)
    actuator = Actuator(lambda: current["settings"], indicators=[slow], environ={})
    assert actuator.settings.indicator_timeout == 5.0
    current["settings"] = ActuatorSettings(indicator_timeout=0.1)
    started = time.monotonic()
    report = await actuator.check_health()
    assert time.monotonic() - started < 0.5
    assert report.status is Status.DOWN


def test_apply_settings_rejects_other_types() -> None:
    with pytest.raises(TypeError):
        Actuator(environ={}).apply_settings({"show_details": "always"})  # type: ignore[arg-type]
