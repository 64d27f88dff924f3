"""Contract of the LoginAttempts port, over every storage adapter."""

from __future__ import annotations

from datetime import timedelta

from application.ports import LoginAttempts
from tests.contract.conftest import T0


async def test_no_failures_for_an_unknown_key(login_attempts: LoginAttempts) -> None:
    assert await login_attempts.failures_since("a@example.com|1.2.3.4", T0) == []


async def test_failures_since_is_inclusive_and_oldest_first(login_attempts: LoginAttempts) -> None:
    key = "a@example.com|1.2.3.4"
    times = [T0 + timedelta(seconds=s, microseconds=3) for s in (30, 10, 20)]
    for t in times:
        await login_attempts.record_failure(key, t)
    got = await login_attempts.failures_since(key, times[1])  # exactly the oldest: included
    assert got == sorted(times)
    assert all(t.utcoffset() == timedelta(0) for t in got)
    later = await login_attempts.failures_since(key, T0 + timedelta(seconds=15))
    assert later == sorted(times)[1:]


async def test_keys_are_independent(login_attempts: LoginAttempts) -> None:
    await login_attempts.record_failure("a|1.1.1.1", T0)
    await login_attempts.record_failure("a|2.2.2.2", T0)
    await login_attempts.record_failure("a|2.2.2.2", T0 + timedelta(seconds=1))
    assert len(await login_attempts.failures_since("a|1.1.1.1", T0)) == 1
    assert len(await login_attempts.failures_since("a|2.2.2.2", T0)) == 2


async def test_reset_forgets_only_that_key(login_attempts: LoginAttempts) -> None:
    await login_attempts.record_failure("k1", T0)
    await login_attempts.record_failure("k2", T0)
    await login_attempts.reset("k1")
    await login_attempts.reset("never-seen")
    assert await login_attempts.failures_since("k1", T0) == []
    assert await login_attempts.failures_since("k2", T0) == [T0]


async def test_same_instant_failures_are_all_counted(login_attempts: LoginAttempts) -> None:
    for _ in range(3):
        await login_attempts.record_failure("k", T0)
    assert await login_attempts.failures_since("k", T0) == [T0, T0, T0]
