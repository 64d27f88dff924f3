"""Forward auth's HTTP side (docs/reference/forward-auth.md), shared by its routes and the login
pages: the request a trusted proxy forwards (``X-Forwarded-*``), the protected hosts' cookie,
and the absolute ``return_to`` a login may follow to a host of ``forward_auth.hosts``."""

from __future__ import annotations

import posixpath
from urllib.parse import unquote, urlencode, urlsplit

from aiohttp import web

from application.forward_auth.settings import ForwardAuthSettings, host_key
from domain.forward_auth import ForwardedRequest
from domain.oidc import loopback_http
from entrypoints.http.keys import CONTAINER
from entrypoints.http.pages.web import MAX_RETURN_TO, issuer_of
from entrypoints.http.requests import is_trusted

__all__ = [
    "START_PATH",
    "clear_forward_auth_cookie",
    "forward_auth_cookie",
    "forward_auth_return",
    "forwarded_request",
    "listed_url",
    "set_forward_auth_cookie",
]

START_PATH = "/ui/forward-auth"
"""Where a login that came from a protected host goes on: it sets the protected hosts' cookie
and sends the browser back (``forward_auth_routes.start``)."""
MAX_URI = 8192
"""The longest ``X-Forwarded-Uri`` read (characters); a longer one is no request we judge."""


def _settings(request: web.Request) -> ForwardAuthSettings:
    settings: ForwardAuthSettings = request.app[CONTAINER].forward_auth_settings().current
    return settings


def _printable(value: str) -> bool:
    return all(0x20 < ord(c) < 0x7F for c in value)


def normal_path(uri: str) -> str:
    """The path of ``uri`` as a rule compares it: percent-decoded, dot segments and repeated
    slashes resolved (``/public/%2e%2e/admin`` is ``/admin``), so no spelling of a path slips
    past a rule about it."""
    raw = uri.partition("?")[0].partition("#")[0]
    return "/" + posixpath.normpath("/" + unquote(raw)).lstrip("/")


def forwarded_request(request: web.Request) -> ForwardedRequest | None:
    """The request a proxy asks about, from ``X-Forwarded-Host`` / ``-Uri`` / ``-Proto`` /
    ``-Method`` — only when the peer is one of ``server.trusted_proxies``; None otherwise, or
    when the host or URI is malformed."""
    trusted = request.app[CONTAINER].config().server.trusted_proxies
    if not is_trusted(request.remote, trusted):
        return None
    headers = request.headers
    host = host_key(headers.get("X-Forwarded-Host", ""))
    uri = headers.get("X-Forwarded-Uri", "/") or "/"
    proto = headers.get("X-Forwarded-Proto", "http").lower()
    method = headers.get("X-Forwarded-Method", "GET").upper()
    if not host or not _printable(host) or "/" in host or "@" in host:
        return None
    if not uri.startswith("/") or len(uri) > MAX_URI or not _printable(uri):
        return None
    if proto not in ("http", "https") or not method.isalpha():
        return None
    return ForwardedRequest(host, normal_path(uri), uri, proto, method)


def listed_url(request: web.Request, url: str | None) -> str | None:
    """``url`` when it is an absolute ``http(s)`` URL of a host in ``forward_auth.hosts`` (no
    user part, no control character, not too long); else None (never followed)."""
    if not url or len(url) > MAX_RETURN_TO or not _printable(url):
        return None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc or "@" in parts.netloc:
        return None
    return url if _settings(request).returns_to(parts.netloc) else None


def forward_auth_return(request: web.Request, return_to: str | None) -> str | None:
    """Where a login page goes on for an absolute ``return_to`` of a listed host: the start
    path that sets the protected hosts' cookie and then sends the browser there; None for
    anything else."""
    url = listed_url(request, return_to)
    return None if url is None else f"{START_PATH}?{urlencode({'rd': url})}"


def forward_auth_cookie(request: web.Request) -> str:
    """The protected hosts' cookie name: ``authsvc_forward_auth`` on an http loopback issuer,
    else ``__Secure-authsvc_forward_auth`` (a ``Domain`` rules out the ``__Host-`` prefix)."""
    plain = loopback_http(issuer_of(request))
    return "authsvc_forward_auth" if plain else "__Secure-authsvc_forward_auth"


def _cookie_attributes(request: web.Request) -> dict[str, object]:
    domain = _settings(request).cookie_domain or None
    return {"domain": domain, "path": "/", "secure": not loopback_http(issuer_of(request)),
            "httponly": True, "samesite": "Lax"}  # fmt: skip


def set_forward_auth_cookie(response: web.StreamResponse, request: web.Request, value: str) -> None:
    """Set the protected hosts' cookie (a session cookie; ``Domain`` =
    ``forward_auth.cookie_domain`` when set, else host-only; ``HttpOnly``, ``SameSite=Lax``,
    ``Secure`` but on an http loopback issuer)."""
    response.set_cookie(forward_auth_cookie(request), value, **_cookie_attributes(request))  # type: ignore[arg-type]


def clear_forward_auth_cookie(response: web.StreamResponse, request: web.Request) -> None:
    """Delete the protected hosts' cookie (its login ended with the hosted session anyway)."""
    response.del_cookie(forward_auth_cookie(request), **_cookie_attributes(request))  # type: ignore[arg-type]
