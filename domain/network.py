"""Which network addresses a delivery may reach (docs/adr/0049-durable-outbox.md): the server-side
request forgery rule (OWASP ASVS 5.0 V1.3: outbound requests go to public addresses only)."""

from __future__ import annotations

import ipaddress

__all__ = ["LOCAL_NAMES", "is_local_host", "is_public_address"]

LOCAL_NAMES = ("localhost", "localhost.", "localhost.localdomain")
"""Host names that always mean this machine, refused without resolving them."""


def is_public_address(address: str) -> bool:
    """True when ``address`` (an IPv4 or IPv6 literal, without brackets; an IPv4-mapped IPv6
    one is judged as its IPv4) is globally routable: not loopback (127.0.0.0/8, ::1), private
    (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16 — cloud metadata
    endpoints —, fe80::/10), shared (100.64/10), unspecified, multicast or reserved. False for
    anything that is not an address literal."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def is_local_host(host: str) -> bool:
    """True when the URL host ``host`` (``urlsplit(...).hostname``: lower case, IPv6 without
    brackets) is refused before any DNS lookup: one of ``LOCAL_NAMES`` (any case), or an
    address literal — IPv6, dotted IPv4, or all digits and dots (``2130706433``) — that is not
    ``is_public_address``. A name is False here: it is judged after resolution, in the
    resolver the connection uses (``adapters.http_sender.PublicOnlyResolver``; ADR 0052,
    docs/adr/0055-jwks-uri-address-rule.md)."""
    if host.lower() in LOCAL_NAMES:
        return True
    literal = ":" in host or host.replace(".", "").isdigit()
    return literal and not is_public_address(host)
