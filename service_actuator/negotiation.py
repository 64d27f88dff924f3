"""Choosing a metrics exposition format from an ``Accept`` header.

Formats served (Prometheus exposition formats,
https://prometheus.io/docs/instrumenting/exposition_formats/ and OpenMetrics 1.0):

* Prometheus text 0.0.4 -- ``text/plain; version=0.0.4; charset=utf-8`` (the default);
* OpenMetrics 1.0.0 -- ``application/openmetrics-text; version=1.0.0; charset=utf-8``.

prometheus-client's own ``choose_encoder`` ignores q-values and may answer text 1.0.0, so the
choice is made here by :func:`negotiate` (RFC 9110 section 12.5.1 semantics). Pure standard
library: this module does not need prometheus-client.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

__all__ = ["OPENMETRICS_1_0_0", "SUPPORTED_FORMATS", "TEXT_0_0_4", "ExpositionFormat", "negotiate"]


@dataclass(frozen=True, slots=True)
class ExpositionFormat:
    """One exposition format this library can serve.

    Attributes:
        media_type: ``type/subtype``, lower case.
        version: the ``version`` media-type parameter it answers to.
        content_type: the full ``Content-Type`` of the response.
    """

    media_type: str
    version: str
    content_type: str

    @property
    def type(self) -> str:
        """The top-level type (``text`` or ``application``)."""
        return self.media_type.partition("/")[0]


TEXT_0_0_4: Final = ExpositionFormat(
    "text/plain", "0.0.4", "text/plain; version=0.0.4; charset=utf-8"
)
OPENMETRICS_1_0_0: Final = ExpositionFormat(
    "application/openmetrics-text",
    "1.0.0",
    "application/openmetrics-text; version=1.0.0; charset=utf-8",
)
SUPPORTED_FORMATS: Final = (TEXT_0_0_4, OPENMETRICS_1_0_0)
"""Served formats; on a tie (equal q, equal specificity) the earlier one wins."""


@dataclass(frozen=True, slots=True)
class _MediaRange:
    type: str
    subtype: str
    params: Mapping[str, str]
    q: float


def _split_outside_quotes(text: str, sep: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    quoted = escaped = False
    for char in text:
        if escaped:
            escaped = False
        elif char == "\\" and quoted:
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == sep and not quoted:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def _parse_qvalue(value: str) -> float | None:
    # RFC 9110 section 12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
    head, _, frac = value.partition(".")
    if head not in {"0", "1"} or len(frac) > 3 or not (frac == "" or frac.isdigit()):
        return None
    q = float(f"{head}.{frac or '0'}")
    return q if q <= 1.0 else None


def _parse_accept(header: str) -> list[_MediaRange]:
    """Media ranges of an Accept header; malformed elements are dropped."""
    ranges: list[_MediaRange] = []
    for element in _split_outside_quotes(header, ","):
        pieces = _split_outside_quotes(element, ";")
        media_type, slash, subtype = pieces[0].strip().lower().partition("/")
        if not slash or not media_type or not subtype or (media_type == "*" and subtype != "*"):
            continue
        params: dict[str, str] = {}
        q: float | None = 1.0
        for piece in pieces[1:]:
            key, eq, value = piece.strip().partition("=")
            key, value = key.strip().lower(), value.strip()
            if not eq or not key:
                continue
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1].replace("\\", "")
            if key == "q":
                q = _parse_qvalue(value)
                break  # parameters after q are accept-ext, not media-type parameters
            params[key] = value
        if q is None:
            continue
        ranges.append(_MediaRange(media_type, subtype, params, q))
    return ranges


def _specificity(media_range: _MediaRange, fmt: ExpositionFormat) -> int | None:
    """How specifically ``media_range`` names ``fmt`` (higher wins), or None if it does not."""
    if media_range.type == "*":
        return 0
    if media_range.type != fmt.type:
        return None
    if media_range.subtype == "*":
        return 1
    if f"{media_range.type}/{media_range.subtype}" != fmt.media_type:
        return None
    version = media_range.params.get("version")
    if version is not None and version != fmt.version:
        return None
    charset = media_range.params.get("charset")
    if charset is not None and charset.lower() != "utf-8":
        return None
    # Other parameters (e.g. ``escaping``) do not exclude a match: the names we emit are
    # legacy-valid, which every escaping scheme leaves unchanged.
    return 3 if version is not None else 2


def negotiate(accept: str | None) -> ExpositionFormat | None:
    """Choose the exposition format for an ``Accept`` header, or None if none is acceptable.

    Each served format takes the q-value of the most specific media range that matches it
    (RFC 9110 section 12.5.1): ``type/subtype;version=V`` > ``type/subtype`` > ``type/*`` >
    ``*/*``. A range with a ``version`` parameter matches only that version, so
    ``text/plain;version=1.0.0`` does not match text 0.0.4. The format with the highest q > 0
    wins; ties go to the more specific match, then to text 0.0.4.

    A missing or blank header, and a header of which no element parses, mean ``*/*``.

    Args:
        accept: the raw ``Accept`` request header, or None.

    Returns:
        :data:`TEXT_0_0_4`, :data:`OPENMETRICS_1_0_0`, or None (answer 406).
    """
    if accept is None or not accept.strip():
        return TEXT_0_0_4
    ranges = _parse_accept(accept)
    if not ranges:
        return TEXT_0_0_4
    best: tuple[float, int, int] | None = None
    chosen: ExpositionFormat | None = None
    for preference, fmt in enumerate(SUPPORTED_FORMATS):
        matches = [(spec, r.q) for r in ranges if (spec := _specificity(r, fmt)) is not None]
        if not matches:
            continue
        top = max(spec for spec, _ in matches)
        q = max(q for spec, q in matches if spec == top)
        if q <= 0:
            continue
        key = (q, top, -preference)
        if best is None or key > best:
            best, chosen = key, fmt
    return chosen
