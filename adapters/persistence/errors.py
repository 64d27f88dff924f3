"""Errors of the storage adapters that are not domain errors, and DSN redaction."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

__all__ = ["StorageUnavailable", "redact_dsn", "safe_reason"]


class StorageUnavailable(Exception):
    """The storage backend cannot be reached or opened (bad DSN, server down, unwritable file).

    The message names the configuration key (e.g. ``storage.postgres_dsn``), the reason, and the
    location with any password redacted; it is meant to be shown to an operator as is.
    """

    def __init__(self, key: str, reason: str, location: str) -> None:
        self.key = key
        self.reason = reason
        self.location = location
        super().__init__(f"{key}: cannot use storage at {location}: {reason}")


def redact_dsn(dsn: str) -> str:
    """``dsn`` with its password (URI userinfo, ``password=`` query or keyword) as ``***``."""
    try:
        parts = urlsplit(dsn)
    except ValueError:
        return "<unparsable DSN>"
    if not parts.scheme or not parts.netloc:
        # A libpq keyword string ("host=... password=...") or garbage: hide any password value.
        words = ["password=***" if w.lower().startswith("password=") else w for w in dsn.split()]
        return " ".join(words)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        if ":" in userinfo:
            user = userinfo.split(":", 1)[0]
            netloc = f"{user}:***@{hostport}"
    query = "&".join(
        "password=***" if q.lower().startswith("password=") else q
        for q in parts.query.split("&")
        if q
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def safe_reason(exc: BaseException, dsn: str = "") -> str:
    """The first line of ``exc``'s message (or its class name), with ``dsn``'s password hidden."""
    text = str(exc).strip() or type(exc).__name__
    line = text.splitlines()[0]
    try:
        password = urlsplit(dsn).password if "://" in dsn else None
    except ValueError:
        password = None
    if password:
        line = line.replace(password, "***")
    return line
