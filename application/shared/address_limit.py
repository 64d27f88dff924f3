"""Writes from anyone, limited per client address (docs/reference/operations.md, ADR 0028).

Unauthenticated routes that write (registration, passkey ceremonies, failed-login audit rows,
reset and verification requests, failed OAuth client authentications) draw one token per
request from a **token bucket per client address**: the bucket holds at most
``server.anonymous_write_burst`` tokens and refills at ``server.anonymous_write_rate`` tokens
per second; a request that finds it empty is refused (429 ``rate_limited`` with the seconds
until a token is back) before anything is read or written. A route whose success proves a
credential (a password, a code, a client secret) gives the token back when it succeeds, so
only what anyone can send is counted (the HTTP edge decides which routes; see
``entrypoints.http.anonymous_writes``).

The buckets live in this process's memory (one per worker with ``--workers N``, so the
effective rate is up to N times the setting), at most ``max_addresses`` of them: the least
recently used is dropped first, so an attacker rotating addresses cannot exhaust memory.
IPv6 addresses are counted per /64 network (one host typically holds a whole /64).
The settings are read at every request, so ``POST /actuator/refresh`` changes them at once;
``anonymous_write_rate = 0`` turns the limit off.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

from application.shared.settings import Live


class WriteLimits(Protocol):
    """The limit's settings (the ``server`` prefix): tokens per second and bucket size."""

    @property
    def anonymous_write_rate(self) -> float: ...
    @property
    def anonymous_write_burst(self) -> int: ...


MAX_ADDRESSES = 65_536
"""Buckets kept at most (about 200 bytes each): beyond, the least recently used is dropped."""

IPV6_PREFIX = 64
"""IPv6 clients are counted per network of this prefix length."""


def bucket_key(address: str) -> str:
    """The bucket an address draws from: an IPv4 address itself, an IPv6 address's /64
    network (``2001:db8:1:2::/64``; an IPv4-mapped one as IPv4); anything else (a Unix
    socket's peer, ``unknown``) as given."""
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, IPV6_PREFIX), strict=False))
    return str(ip)


class AddressRateLimiter:
    """Token buckets per client address (see the module docstring).

    ``take(address)`` → None when the request may go on (a token was taken), else the whole
    seconds (>= 1) until one is back — the ``Retry-After``. ``give_back(address)`` returns a
    token taken by a request that turned out to prove a credential. ``settings`` is the live
    ``server`` prefix (``anonymous_write_rate`` tokens/s, ``anonymous_write_burst`` tokens);
    ``monotonic`` the clock in seconds. Not thread-safe: called from the event loop only.
    """

    def __init__(
        self,
        settings: Live[WriteLimits],
        monotonic: Callable[[], float] = time.monotonic,
        max_addresses: int = MAX_ADDRESSES,
    ) -> None:
        self._settings = settings
        self._monotonic = monotonic
        self._max = max_addresses
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        """key → (tokens, monotonic time they were counted), least recently used first."""

    def __len__(self) -> int:
        """The number of buckets held (at most ``max_addresses``)."""
        return len(self._buckets)

    def _level(self, key: str, rate: float, burst: int, now: float) -> float:
        tokens, since = self._buckets.get(key, (float(burst), now))
        return min(float(burst), tokens + max(0.0, now - since) * rate)

    def take(self, address: str) -> int | None:
        """Take a token from ``address``'s bucket: None if there was one, else the seconds
        until there is one (nothing is taken then)."""
        server = self._settings.current
        rate, burst = server.anonymous_write_rate, server.anonymous_write_burst
        if rate <= 0:
            return None
        key = bucket_key(address)
        now = self._monotonic()
        tokens = self._level(key, rate, burst, now)
        allowed = tokens >= 1.0
        if allowed:
            tokens -= 1.0
        self._buckets[key] = (tokens, now)
        self._buckets.move_to_end(key)
        while len(self._buckets) > self._max:
            self._buckets.popitem(last=False)
        if allowed:
            return None
        return max(1, math.ceil((1.0 - tokens) / rate))

    def give_back(self, address: str) -> None:
        """Return the token ``take`` took for ``address`` (never above the burst)."""
        server = self._settings.current
        key = bucket_key(address)
        if server.anonymous_write_rate <= 0 or key not in self._buckets:
            return
        now = self._monotonic()
        rate, burst = server.anonymous_write_rate, server.anonymous_write_burst
        self._buckets[key] = (min(float(burst), self._level(key, rate, burst, now) + 1.0), now)


__all__ = ["MAX_ADDRESSES", "AddressRateLimiter", "bucket_key"]
