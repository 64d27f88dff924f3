"""Service metrics recorded from events (docs/reference/operations.md), and the events the use cases
publish for them (docs/reference/operations.md: ids, never secrets)."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from adapters.events.inprocess import InProcessEventBus
from adapters.metrics import ServiceMetrics
from application.events.catalog import (
    AccessTokenIssued,
    LoginFailed,
    LoginSucceeded,
    RefreshFailed,
    RefreshTokenReuseDetected,
    SessionEnded,
)
from application.login.auth import AuthService
from domain.errors import InvalidCredentials, InvalidRefreshToken, RateLimited
from tests.fakes import FakeClock, Recorder

PASSWORD = "correct horse battery"


def value(registry: CollectorRegistry, name: str, **labels: str) -> float:
    got = registry.get_sample_value(name, labels)
    assert got is not None, (name, labels)
    return got


async def test_events_feed_the_counters() -> None:
    registry = CollectorRegistry()
    bus = InProcessEventBus()
    ServiceMetrics(registry).subscribe(bus)
    assert value(registry, "authsvc_logins_total", outcome="rate_limited") == 0
    await bus.publish(LoginSucceeded(user_id="u", family_id="f"))
    await bus.publish(LoginFailed(user_id=None, client="c", reason="unknown_email"))
    await bus.publish(LoginFailed(user_id="u", client="c", reason="wrong_password"))
    await bus.publish(LoginFailed(user_id=None, client="c", reason="rate_limited"))
    await bus.publish(AccessTokenIssued("u", "f", "ML-DSA-87", "login"))
    await bus.publish(AccessTokenIssued("u", "f", "ML-DSA-87", "refresh"))
    await bus.publish(RefreshFailed(reason="unknown"))
    await bus.publish(RefreshTokenReuseDetected("u", "f", "abcd1234", 2))
    assert value(registry, "authsvc_logins_total", outcome="success") == 1
    assert value(registry, "authsvc_logins_total", outcome="invalid_credentials") == 2
    assert value(registry, "authsvc_logins_total", outcome="rate_limited") == 1
    issued = "authsvc_access_tokens_issued_total"
    assert value(registry, issued, algorithm="ML-DSA-87", grant="login") == 1
    assert value(registry, issued, algorithm="ML-DSA-87", grant="refresh") == 1
    for outcome in ("success", "invalid", "reuse"):
        assert value(registry, "authsvc_token_refreshes_total", outcome=outcome) == 1
    assert value(registry, "authsvc_refresh_token_reuse_detections_total") == 1


async def test_sessions_ended_are_counted_by_reason() -> None:
    registry = CollectorRegistry()
    bus = InProcessEventBus()
    ServiceMetrics(registry).subscribe(bus)
    reasons = ("logout", "user", "admin", "reuse", "password", "disabled")
    for reason in reasons:
        assert value(registry, "authsvc_sessions_ended_total", reason=reason) == 0
    await bus.publish(SessionEnded("u", "s1", "admin", "root"))
    await bus.publish(SessionEnded("u", "s2", "admin", "root"))
    await bus.publish(SessionEnded("u", "s3", "reuse"))
    await bus.publish(LoginFailed(user_id="u", client="c", reason="account_disabled"))
    assert value(registry, "authsvc_sessions_ended_total", reason="admin") == 2
    assert value(registry, "authsvc_sessions_ended_total", reason="reuse") == 1
    assert value(registry, "authsvc_sessions_ended_total", reason="logout") == 0
    assert value(registry, "authsvc_logins_total", outcome="account_disabled") == 1


def test_one_set_per_registry() -> None:
    registry = CollectorRegistry()
    ServiceMetrics(registry)
    with pytest.raises(ValueError):
        ServiceMetrics(registry)


async def test_login_and_refresh_publish_token_events(
    service: AuthService, recorder: Recorder, signer
) -> None:
    user = await service.register("ivy@example.com", PASSWORD)
    pair = await service.login("ivy@example.com", PASSWORD, "1.1.1.1")
    rotated = await service.refresh(pair.refresh_token)
    issued = recorder.of(AccessTokenIssued)
    [login_event] = recorder.of(LoginSucceeded)
    assert issued == [
        AccessTokenIssued(user.id, login_event.family_id, signer.algorithm, "login"),
        AccessTokenIssued(user.id, login_event.family_id, signer.algorithm, "refresh"),
    ]
    with pytest.raises(InvalidRefreshToken):
        await service.refresh("unknown")
    assert recorder.of(RefreshFailed) == [RefreshFailed(reason="unknown")]
    with pytest.raises(InvalidRefreshToken):
        await service.refresh(pair.refresh_token)  # reuse
    assert len(recorder.of(RefreshTokenReuseDetected)) == 1
    assert len(recorder.of(RefreshFailed)) == 1
    for event in recorder.events:
        for secret in (PASSWORD, pair.access_token, pair.refresh_token, rotated.refresh_token):
            assert secret not in repr(event)


async def test_an_expired_refresh_token_publishes_refresh_failed(
    service: AuthService, recorder: Recorder, clock: FakeClock, auth_settings
) -> None:
    user = await service.register("jo@example.com", PASSWORD)
    pair = await service.login("jo@example.com", PASSWORD, "1.1.1.1")
    clock.advance(auth_settings.current.refresh_token_ttl + 1)
    with pytest.raises(InvalidRefreshToken):
        await service.refresh(pair.refresh_token)
    assert recorder.of(RefreshFailed) == [RefreshFailed(reason="expired", user_id=user.id)]


async def test_a_throttled_login_publishes_login_failed_rate_limited(
    service: AuthService, recorder: Recorder
) -> None:
    await service.register("kim@example.com", PASSWORD)
    for _ in range(5):
        with pytest.raises(InvalidCredentials):
            await service.login("kim@example.com", "bad password", "9.9.9.9")
    with pytest.raises(RateLimited):
        await service.login("kim@example.com", PASSWORD, "9.9.9.9")
    reasons = [e.reason for e in recorder.of(LoginFailed)]
    assert reasons == ["wrong_password"] * 5 + ["rate_limited"]
