"""Reading requests: the strict JSON body parser (docs/reference/operations.md), structured bodies,
bearer tokens (RFC 6750) and the client address behind trusted proxies."""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import json
import math
from typing import Any, TypeVar

import cattrs
from aiohttp import web

from domain.model import USER_AGENT_MAX_LENGTH
from entrypoints.config.converters import make_converter, structure
from entrypoints.http.keys import BODY_TIMEOUT
from entrypoints.http.problems import HttpProblem

T = TypeVar("T")

MAX_DEPTH = 32
"""Deepest nesting of arrays and objects a body may have (docs/reference/operations.md); the
top-level value is depth 1."""

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
"""The integers a body may hold: signed 64 bits (docs/reference/operations.md)."""

_MAX_INT_DIGITS = len(str(INT64_MIN))  # 20 characters: longer literals are out of range anyway

request_converter: cattrs.Converter = make_converter(forbid_extra_keys=False, refuse_null=True)
"""Structures request bodies: unknown members are ignored; a wrong type (a null, or a string
where a list is expected, included), or a string holding U+0000 (which no storage backend can
hold), is 422 naming the field and the JSON type expected."""


DEFAULT_BODY_TIMEOUT = 10.0
"""Seconds a body may take to arrive when the app does not say (``server.body_timeout``)."""


class RequestTimeout(HttpProblem):
    """408 ``request_timeout``: the body did not arrive within ``server.body_timeout``; the
    connection closes after the answer (docs/reference/operations.md)."""

    def __init__(self, detail: str) -> None:
        super().__init__(408, "request_timeout", detail, close=True)


class MalformedBody(HttpProblem):
    """400 ``malformed_body``: the body is not a JSON object within the limits of section 1."""

    def __init__(self, detail: str) -> None:
        super().__init__(400, "malformed_body", detail)


def _int(literal: str) -> int:
    if len(literal) > _MAX_INT_DIGITS:  # before int(): no quadratic conversion, no int-str limit
        raise MalformedBody("an integer is outside the signed 64-bit range")
    value = int(literal)
    if not INT64_MIN <= value <= INT64_MAX:
        raise MalformedBody("an integer is outside the signed 64-bit range")
    return value


def _float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise MalformedBody("a number is outside the range of a double")
    if not INT64_MIN <= value <= INT64_MAX:  # 1e19 is the integer 10**19 to JSON Schema too
        raise MalformedBody("a number is outside the signed 64-bit range")
    return value


def _constant(name: str) -> Any:
    raise MalformedBody(f"{name} is not a JSON value")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise MalformedBody("a member name is repeated within one object")
    return obj


_decoder = json.JSONDecoder(
    object_pairs_hook=_object, parse_int=_int, parse_float=_float, parse_constant=_constant
)


def _check_depth_and_text(value: Any) -> None:
    """Refuse nesting deeper than ``MAX_DEPTH`` and strings (names included) that hold a lone
    surrogate (a ``\\ud800`` escape: valid JSON syntax, but no Unicode text)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise MalformedBody("a string holds a lone surrogate") from None
        elif isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                raise MalformedBody(f"nesting is deeper than {MAX_DEPTH} levels")
            members = item.items() if isinstance(item, dict) else enumerate(item)
            for key, member in members:
                if isinstance(key, str):
                    stack.append((key, depth))
                stack.append((member, depth + 1))


def parse_json_object(raw: bytes) -> dict[str, Any]:
    """Parse a request body strictly (docs/reference/operations.md; RFC 8259 with the section's
    limits).

    ``raw`` is UTF-8 JSON whose top-level value is an object. Raises ``MalformedBody`` (400
    ``malformed_body``) for invalid UTF-8 or JSON, nesting deeper than 32 levels, a number
    (integer, or written with a fraction or exponent: ``1e19``) outside the signed 64-bit range,
    ``NaN``/``Infinity``, a member
    name repeated within one object, a lone surrogate in a string, or a top-level value that is
    not an object. Never raises anything else: every hostile body is a 400.

    The standard library's decoder enforces the rules through its own hooks (``parse_int``,
    ``parse_float``, ``parse_constant``, ``object_pairs_hook``); orjson, used for responses,
    keeps the last of repeated names and reads integers past 2**64 as floats (ADR 0010).
    """
    try:
        text = raw.decode("utf-8")
        data = _decoder.decode(text)
    except UnicodeDecodeError:
        raise MalformedBody("body is not UTF-8") from None
    except json.JSONDecodeError:
        raise MalformedBody("body is not valid JSON") from None
    except RecursionError:
        raise MalformedBody(f"nesting is deeper than {MAX_DEPTH} levels") from None
    if not isinstance(data, dict):
        raise MalformedBody("body must be a JSON object")
    _check_depth_and_text(data)
    return data


def _is_json(content_type: str) -> bool:
    return content_type == "application/json" or (
        content_type.startswith("application/") and content_type.endswith("+json")
    )


async def read_body(request: web.Request) -> bytes:
    """The whole request body, read within ``server.body_timeout`` seconds (the app's
    ``BODY_TIMEOUT``). Raises ``RequestTimeout`` (408, connection closed) when it is slower,
    aiohttp's 413 when it exceeds ``server.max_body_bytes``."""
    limit = request.config_dict.get(BODY_TIMEOUT, DEFAULT_BODY_TIMEOUT)
    try:
        async with asyncio.timeout(limit):
            return await request.read()
    except TimeoutError:
        raise RequestTimeout("the request body did not arrive within server.body_timeout") from None


async def read_json(request: web.Request, cls: type[T]) -> T:
    """The request body structured into ``cls`` (an attrs class).

    Raises ``HttpProblem`` 400 ``malformed_body`` when the Content-Type is not JSON or
    ``parse_json_object`` refuses the body, ``RequestTimeout`` (408) when the body does not
    arrive within ``server.body_timeout``, aiohttp's 413 when it exceeds
    ``server.max_body_bytes`` (the app's ``client_max_size``), and ``ValidationFailed`` (422)
    naming each bad field.
    """
    body, _ = await read_json_nulls(request, cls, ())
    return body


async def read_json_nulls(
    request: web.Request, cls: type[T], nullable: tuple[str, ...]
) -> tuple[T, frozenset[str]]:
    """As ``read_json``, but the top-level members named in ``nullable`` may be a JSON
    ``null`` (a change's "set back to none", e.g. ``jwks`` in ``PATCH /oauth/clients/{id}``):
    they are left out of the structuring (``cls`` keeps its default for them) and named in
    the second value. Every other ``null`` is refused as ``read_json`` refuses it (422)."""
    if not _is_json(request.content_type):
        raise HttpProblem(400, "malformed_body", "Content-Type must be application/json")
    data = parse_json_object(await read_body(request))
    nulls = frozenset(k for k in nullable if k in data and data[k] is None)
    rest = {k: v for k, v in data.items() if k not in nulls}
    return structure(request_converter, rest, cls), nulls


@functools.lru_cache(maxsize=8)
def _networks(
    trusted_proxies: tuple[str, ...],
) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    # Entries were validated when the configuration was read (application.shared.settings).
    return tuple(ipaddress.ip_network(p, strict=False) for p in trusted_proxies)


def is_trusted(address: str | None, trusted_proxies: tuple[str, ...]) -> bool:
    """Whether ``address`` (an IP address) is in ``server.trusted_proxies`` (addresses or CIDR
    networks); False for no address or a malformed one."""
    if not trusted_proxies or not address:
        return False
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in _networks(trusted_proxies))


def client_address(request: web.Request, trusted_proxies: tuple[str, ...]) -> str:
    """The client's address: the peer, or — when the peer is a trusted proxy (address or CIDR in
    ``server.trusted_proxies``) — the right-most ``X-Forwarded-For`` entry not itself trusted."""
    peer = request.remote or "unknown"
    if not is_trusted(peer, trusted_proxies):
        return peer
    hops = [h.strip() for h in request.headers.get("X-Forwarded-For", "").split(",") if h.strip()]
    for hop in reversed(hops):
        if not is_trusted(hop, trusted_proxies):
            return hop
    return peer


def user_agent(request: web.Request) -> str | None:
    """The request's ``User-Agent`` as a session records it (docs/reference/tokens-and-sessions.md):
    its printable characters (no control characters or undecodable bytes), cut to 256; None when
    absent."""
    raw = request.headers.get("User-Agent")
    if raw is None:
        return None
    return "".join(ch for ch in raw[: USER_AGENT_MAX_LENGTH * 4] if ch.isprintable())[
        :USER_AGENT_MAX_LENGTH
    ]
