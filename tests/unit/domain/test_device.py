"""The device grant's rules (RFC 8628; ``domain.device``): user codes (alphabet, length, shown
``XXXX-XXXX``, normalized), and what a poll gets with the ``slow_down`` arithmetic over a fake
clock."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import attrs
import pytest

from domain.device import (
    INTERVAL,
    MAX_INTERVAL,
    SLOW_DOWN_STEP,
    USER_CODE_ALPHABET,
    USER_CODE_LENGTH,
    DeviceGrant,
    DeviceStatus,
    PollOutcome,
    format_user_code,
    new_user_code,
    normalize_user_code,
    poll_outcome,
)
from tests.fakes import FakeClock


def test_user_codes_are_eight_consonants_shown_with_a_hyphen() -> None:
    codes = [new_user_code() for _ in range(2000)]
    assert all(len(c) == USER_CODE_LENGTH and set(c) <= set(USER_CODE_ALPHABET) for c in codes)
    assert len(set(codes)) == len(codes)
    # every character of the alphabet turns up (uniform draw, not a fixed subset)
    assert set(Counter("".join(codes))) == set(USER_CODE_ALPHABET)
    assert format_user_code("BCDFGHJK") == "BCDF-GHJK"
    assert not set("AEIOUY0123456789") & set(USER_CODE_ALPHABET)


@pytest.mark.parametrize(
    ("typed", "normal"),
    [
        ("BCDF-GHJK", "BCDFGHJK"),
        ("bcdf-ghjk", "BCDFGHJK"),
        (" bcdf ghjk ", "BCDFGHJK"),
        ("BCDFGHJK", "BCDFGHJK"),
        ("BCDF-GHJ", None),  # too short
        ("BCDF-GHJKL", None),  # too long
        ("BCDA-GHJK", None),  # a vowel is not in the alphabet
        ("BCDF_GHJK", None),
        ("", None),
        ("B" * 200, None),
    ],
)
def test_what_a_user_types_is_normalized(typed: str, normal: str | None) -> None:
    assert normalize_user_code(typed) == normal


def _grant(clock: FakeClock, **kw: object) -> DeviceGrant:
    now = clock.now()
    grant = DeviceGrant(
        "d" * 64, "u" * 64, "c" * 32, ("openid",), now, now + timedelta(seconds=600)
    )
    return attrs.evolve(grant, **kw)  # type: ignore[arg-type]


def _poll(grant: DeviceGrant, clock: FakeClock) -> tuple[DeviceGrant, PollOutcome]:
    """One poll as the use case does it: the outcome, then the poll and interval stored."""
    outcome, interval = poll_outcome(grant, clock.now())
    return attrs.evolve(grant, last_polled_at=clock.now(), interval=interval), outcome


def test_slow_down_grows_the_interval_by_five_seconds_each_time() -> None:
    clock = FakeClock()
    grant = _grant(clock)
    grant, outcome = _poll(grant, clock)
    assert outcome is PollOutcome.PENDING and grant.interval == INTERVAL
    clock.advance(INTERVAL - 0.001)
    grant, outcome = _poll(grant, clock)
    assert outcome is PollOutcome.SLOW_DOWN and grant.interval == INTERVAL + SLOW_DOWN_STEP
    clock.advance(INTERVAL)  # the old interval no longer does
    grant, outcome = _poll(grant, clock)
    assert outcome is PollOutcome.SLOW_DOWN and grant.interval == INTERVAL + 2 * SLOW_DOWN_STEP
    clock.advance(grant.interval)  # exactly the interval later: fine
    grant, outcome = _poll(grant, clock)
    assert outcome is PollOutcome.PENDING and grant.interval == INTERVAL + 2 * SLOW_DOWN_STEP


def test_the_interval_stops_growing_at_its_cap() -> None:
    clock = FakeClock()
    grant = _grant(clock, interval=MAX_INTERVAL, last_polled_at=clock.now())
    assert poll_outcome(grant, clock.now()) == (PollOutcome.SLOW_DOWN, MAX_INTERVAL)


def test_each_state_answers_in_order() -> None:
    clock = FakeClock()
    approved = _grant(clock, status=DeviceStatus.APPROVED)
    assert poll_outcome(approved, clock.now())[0] is PollOutcome.ISSUE
    too_soon = attrs.evolve(approved, last_polled_at=clock.now())
    assert poll_outcome(too_soon, clock.now())[0] is PollOutcome.SLOW_DOWN
    denied = _grant(clock, status=DeviceStatus.DENIED, last_polled_at=clock.now())
    assert poll_outcome(denied, clock.now())[0] is PollOutcome.DENIED
    used = _grant(clock, status=DeviceStatus.USED, last_polled_at=clock.now())
    assert poll_outcome(used, clock.now())[0] is PollOutcome.USED
    clock.advance(600)
    for grant in (approved, denied, used, _grant(FakeClock())):
        assert poll_outcome(grant, clock.now())[0] is PollOutcome.EXPIRED
