"""The outbox's pure rules (docs/adr/0049-durable-outbox.md): the back-channel logout backoff,
the retry window, a retry schedule, when an item may be claimed, and the SSRF address rule of
docs/adr/0049-durable-outbox.md."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest

from domain.network import is_public_address
from domain.outbox import (
    OutboxItem,
    OutboxKind,
    backchannel_delay,
    new_outbox_id,
    next_try_at,
    schedule_delay,
)
from tests.factories import T0


def test_backchannel_backoff_starts_at_two_seconds_doubles_and_is_capped() -> None:
    assert [backchannel_delay(n) for n in range(1, 12)] == [
        2, 4, 8, 16, 32, 64, 128, 256, 512, 600, 600,
    ]  # fmt: skip
    assert backchannel_delay(10_000) == 600
    with pytest.raises(ValueError, match="attempts"):
        backchannel_delay(0)


def test_retries_stop_at_the_end_of_the_window() -> None:
    window = 3600
    assert next_try_at(T0, T0 + timedelta(seconds=10), 4, window) == T0 + timedelta(seconds=14)
    at_edge = T0 + timedelta(seconds=window - 2)
    assert next_try_at(T0, at_edge, 2, window) == T0 + timedelta(seconds=window)
    assert next_try_at(T0, at_edge, 3, window) is None


def test_a_backchannel_notice_is_tried_within_the_default_hour_then_given_up() -> None:
    """Walking the schedule with a fake clock: every try is due within the hour, the next one
    would fall after it."""
    now, attempts, tries = T0, 0, [T0]
    while True:
        attempts += 1
        nxt = next_try_at(T0, now, backchannel_delay(attempts), 3600)
        if nxt is None:
            break
        tries.append(nxt)
        now = nxt
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(tries)]
    assert gaps[:4] == [2, 4, 8, 16]
    assert tries[-1] <= T0 + timedelta(hours=1) < tries[-1] + timedelta(seconds=600)


def test_a_schedule_repeats_its_last_wait() -> None:
    schedule = (5, 30, 120, 600, 1800, 3600)
    assert [schedule_delay(schedule, n) for n in (1, 2, 6, 7, 30)] == [5, 30, 3600, 3600, 3600]
    with pytest.raises(ValueError, match="schedule"):
        schedule_delay((), 1)
    with pytest.raises(ValueError, match="schedule"):
        schedule_delay(schedule, 0)


def test_an_item_is_claimable_when_due_and_free_or_its_lease_lapsed() -> None:
    item = OutboxItem(
        new_outbox_id(), OutboxKind.WEBHOOK, {"a": "b"}, T0, T0 + timedelta(seconds=5)
    )
    assert not item.claimable(T0)
    assert item.claimable(T0 + timedelta(seconds=5))
    held = OutboxItem(
        item.id, item.kind, item.payload, T0, T0, claimed_until=T0 + timedelta(seconds=60),
        claim="w",
    )  # fmt: skip
    assert not held.claimable(T0 + timedelta(seconds=59))
    assert held.claimable(T0 + timedelta(seconds=60))
    with pytest.raises(TypeError):
        item.payload["a"] = "c"  # type: ignore[index]


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1", "127.8.9.10", "10.0.0.1", "10.255.1.2", "172.16.0.1", "192.168.1.1",
     "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "fe80::1", "fc00::1", "::",
     "::ffff:127.0.0.1", "::ffff:10.0.0.1", "224.0.0.1", "not-an-address", ""],
)  # fmt: skip
def test_loopback_private_link_local_and_other_non_public_addresses_are_refused(
    address: str,
) -> None:
    assert is_public_address(address) is False


@pytest.mark.parametrize("address", ["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111"])
def test_public_addresses_are_allowed(address: str) -> None:
    assert is_public_address(address) is True
