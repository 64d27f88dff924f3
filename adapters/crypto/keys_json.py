"""The format of ``keys.json`` (``adapters.crypto.keystore``): one ``KeyRecord`` per key under
``"records"`` (format 2: kid, alg, file, created_at, activates_at, retired_at, verify_until as
ISO 8601), and the format-1 ``"keys"`` map of ADR 0005 (one entry per algorithm), read and
converted. No secret is ever written there.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from adapters.crypto.key_files import KEY_FILES
from adapters.crypto.key_records import KeyRecord

log = logging.getLogger(__name__)

STATE_FILE = "keys.json"
"""Record of each key's id and verification deadline (JSON, no secrets)."""

__all__ = ["STATE_FILE", "isoformat", "parse_time", "record_json", "records_of"]


def _time_json(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat()


def record_json(r: KeyRecord) -> dict[str, Any]:
    """``r`` as an entry of ``keys.json``'s ``"records"`` (format 2)."""
    return {
        "kid": r.kid,
        "alg": r.alg,
        "file": r.ref or KEY_FILES[r.alg],
        "created_at": _time_json(r.created_at),
        "activates_at": _time_json(r.activates_at),
        "retired_at": _time_json(r.retired_at),
        "verify_until": _time_json(r.verify_until),
    }


def records_of(state: Mapping[str, Any]) -> list[KeyRecord]:
    """The records of a ``keys.json`` state: format 2 (``"records"``), else the format-1
    ``"keys"`` map converted (an active key signs; a retired one verifies until its
    ``verify_until``). Malformed entries are logged and skipped."""
    out: list[KeyRecord] = []
    raw = state.get("records")
    if isinstance(raw, list):
        for entry in raw:
            record = _record_from(entry)
            if record is None:
                log.warning("ignoring a malformed record in %s: %r", STATE_FILE, entry)
            else:
                out.append(record)
        return out
    for alg, rec in state.get("keys", {}).items():
        if alg not in KEY_FILES or not isinstance(rec, dict) or not isinstance(rec.get("kid"), str):
            continue
        since = parse_time(rec.get("activated_at")) or datetime.fromtimestamp(0).astimezone()
        until = None if rec.get("active") else parse_time(rec.get("verify_until")) or since
        out.append(KeyRecord(rec["kid"], alg, since, since, None, until, KEY_FILES[alg]))
    return out


def _record_from(entry: object) -> KeyRecord | None:
    if not isinstance(entry, dict):
        return None
    kid, alg, ref = entry.get("kid"), entry.get("alg"), entry.get("file")
    created, activates = parse_time(entry.get("created_at")), parse_time(entry.get("activates_at"))
    if not (isinstance(kid, str) and alg in KEY_FILES and isinstance(ref, str)):
        return None
    if created is None or activates is None:
        return None
    return KeyRecord(
        kid,
        str(alg),
        created,
        activates,
        parse_time(entry.get("retired_at")),
        parse_time(entry.get("verify_until")),
        ref,
    )


def isoformat(t: datetime) -> str:
    """``t`` as an ISO 8601 string (for ``keys.json``)."""
    return t.isoformat()


def parse_time(s: object) -> datetime | None:
    """An ISO 8601 string from ``keys.json`` as a datetime, or None if missing/malformed."""
    if not isinstance(s, str):
        return None
    try:
        return datetime.fromisoformat(s)
    except ValueError:
        return None
