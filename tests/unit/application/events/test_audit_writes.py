"""Audit rows of failures (docs/reference/operations.md, ADR 0019): written apart right after the
failure; a storage that cannot take them costs a log line and a counted ``AuditWriteFailed``,
never the request. Retention: housekeeping purges rows older than ``audit.retention_days``."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest

from adapters.events.inprocess import InProcessEventBus
from adapters.metrics import ServiceMetrics
from adapters.persistence.memory import MemoryStorage
from application.audit.housekeeping import PurgeExpired
from application.events.audit import REQUEST_CONTEXT, RequestContext, publish_failure
from application.events.catalog import AuditWriteFailed, LoginFailed
from application.login.auth import AuthService
from application.shared.settings import AuditSettings, Live
from domain.audit import AuditQuery
from domain.errors import InvalidCredentials
from tests.fakes import FakeClock, Recorder

PASSWORD = "correct horse battery"


class BrokenAuditStorage:
    """A storage whose units of work open but cannot write (``begin`` raises on entry)."""

    def __init__(self, inner: MemoryStorage) -> None:
        self.inner = inner

    def begin(self) -> AbstractAsyncContextManager[Any]:
        @asynccontextmanager
        async def broken() -> AsyncIterator[Any]:
            raise OSError("disk full")
            yield  # pragma: no cover

        return broken()

    def read(self) -> AbstractAsyncContextManager[Any]:
        return self.inner.read()


async def _all(storage: MemoryStorage) -> list[Any]:
    async with storage.read() as uow:
        return await uow.audit.list_page(AuditQuery(), None, 1000)


async def test_a_failed_login_is_recorded_apart_with_the_request_context(
    service: AuthService, storage: MemoryStorage, clock: FakeClock
) -> None:
    await service.register("alice@example.com", PASSWORD)
    clock.advance(1)
    token = REQUEST_CONTEXT.set(RequestContext("203.0.113.7", "agent/1"))
    try:
        with pytest.raises(InvalidCredentials):
            await service.login("alice@example.com", "wrong password", "203.0.113.7")
    finally:
        REQUEST_CONTEXT.reset(token)
    failed = (await _all(storage))[0]
    assert failed.type == "login.failed"
    assert failed.details_dict() == {"reason": "wrong_password", "method": "password"}
    assert (failed.client_address, failed.user_agent) == ("203.0.113.7", "agent/1")
    assert failed.org_id == "default"


async def test_an_unwritable_failure_row_is_logged_and_counted_never_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bus = InProcessEventBus()
    recorder = Recorder(bus)
    metrics = ServiceMetrics(registry=_registry()).subscribe(bus)
    event = LoginFailed(user_id="u1", client="10.0.0.1", reason="wrong_password")
    with caplog.at_level(logging.ERROR):
        await publish_failure(BrokenAuditStorage(MemoryStorage()), bus, FakeClock().now(), event)  # type: ignore[arg-type]
    assert recorder.of(AuditWriteFailed) == [AuditWriteFailed(type="login.failed")]
    assert recorder.of(LoginFailed) == [event]  # the failure itself is still published
    assert "audit row not written: type=login.failed" in caplog.text
    assert "10.0.0.1" not in caplog.text
    assert metrics.audit_write_failures.labels("login.failed")._value.get() == 1


def _registry() -> Any:
    from prometheus_client import CollectorRegistry

    return CollectorRegistry()


async def test_housekeeping_purges_rows_past_the_retention(
    service: AuthService, storage: MemoryStorage, clock: FakeClock
) -> None:
    retention = Live(AuditSettings(retention_days=2))
    purge = PurgeExpired(storage, clock, retention)
    await service.register("alice@example.com", PASSWORD)  # user.registered at day 0
    clock.advance(86_400)
    await service.login("alice@example.com", PASSWORD, "10.0.0.1")  # login.succeeded at day 1
    clock.advance(86_400 + 1)  # day 2 + 1 s: only the registration is older than 2 days
    await purge()
    assert [r.type for r in await _all(storage)] == ["login.succeeded"]
    clock.advance(86_400)
    await purge()
    assert await _all(storage) == []
