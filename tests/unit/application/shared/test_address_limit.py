"""The token buckets per client address that limit writes from anyone (docs/reference/operations.md,
ADR 0028): burst, refill, Retry-After, tokens given back, settings read live, IPv6 per /64,
and a bounded number of buckets."""

from __future__ import annotations

import attrs

from application.shared.address_limit import AddressRateLimiter, bucket_key
from application.shared.settings import Live
from entrypoints.config.infrastructure import ServerSettings


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _limiter(
    rate: float = 10, burst: int = 50, **kwargs: int
) -> tuple[AddressRateLimiter, Clock, Live[ServerSettings]]:
    settings = Live(ServerSettings(anonymous_write_rate=rate, anonymous_write_burst=burst))
    clock = Clock()
    return AddressRateLimiter(settings, clock, **kwargs), clock, settings


def test_a_burst_then_the_rate() -> None:
    limiter, clock, _ = _limiter(rate=10, burst=50)
    assert [limiter.take("192.0.2.1") for _ in range(50)] == [None] * 50
    assert limiter.take("192.0.2.1") == 1  # Retry-After: whole seconds, at least 1
    assert limiter.take("192.0.2.2") is None  # another address has its own bucket
    clock.now += 0.5  # five tokens back
    assert [limiter.take("192.0.2.1") for _ in range(6)] == [None] * 5 + [1]
    clock.now += 3600  # never more than the burst
    assert sum(limiter.take("192.0.2.1") is None for _ in range(60)) == 50


def test_retry_after_counts_the_seconds_until_a_token_is_back() -> None:
    limiter, _, _ = _limiter(rate=0.25, burst=1)
    assert limiter.take("192.0.2.1") is None
    assert limiter.take("192.0.2.1") == 4


def test_a_token_given_back_can_be_taken_again_but_never_beyond_the_burst() -> None:
    limiter, _, _ = _limiter(rate=1, burst=2)
    assert limiter.take("a") is None and limiter.take("a") is None
    assert limiter.take("a") is not None
    limiter.give_back("a")
    assert limiter.take("a") is None
    limiter.give_back("a")
    limiter.give_back("a")
    limiter.give_back("a")
    assert [limiter.take("a") is None for _ in range(3)] == [True, True, False]


def test_settings_are_read_at_every_request_and_zero_turns_the_limit_off() -> None:
    limiter, _, settings = _limiter(rate=1, burst=1)
    assert limiter.take("a") is None and limiter.take("a") is not None
    settings.replace(attrs.evolve(settings.current, anonymous_write_rate=0))
    assert all(limiter.take("a") is None for _ in range(1000))
    settings.replace(
        attrs.evolve(settings.current, anonymous_write_rate=1000, anonymous_write_burst=3)
    )
    assert [limiter.take("b") is None for _ in range(4)] == [True, True, True, False]


def test_ipv6_clients_are_counted_per_64_network() -> None:
    assert (
        bucket_key("2001:db8:1:2:aaaa::1")
        == bucket_key("2001:db8:1:2:bbbb::2")
        == "2001:db8:1:2::/64"
    )
    assert bucket_key("2001:db8:1:3::1") != bucket_key("2001:db8:1:2::1")
    assert bucket_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert bucket_key("192.0.2.7") == "192.0.2.7"
    assert bucket_key("unknown") == "unknown"
    limiter, _, _ = _limiter(rate=1, burst=1)
    assert limiter.take("2001:db8::1") is None
    assert limiter.take("2001:db8::ffff") is not None


def test_an_attacker_rotating_addresses_cannot_grow_the_table_past_its_bound() -> None:
    limiter, _, _ = _limiter(rate=1, burst=1, max_addresses=100)
    assert limiter.take("victim") is None
    for i in range(10_000):
        limiter.take(f"10.0.{i // 256}.{i % 256}")
        assert len(limiter) <= 100
    assert len(limiter) == 100
