"""SQLite storage faults (docs/reference/operations.md, ADR 0014): which driver errors mean "cannot
write or use the file now", and the ``FaultRecorder`` a storage hands its units of work."""

from __future__ import annotations

import logging
import sqlite3

from domain.errors import StorageFault

log = logging.getLogger("authsvc.storage")

WRITE_FAULT_CODES = {
    sqlite3.SQLITE_FULL: "the disk is full",
    sqlite3.SQLITE_READONLY: "the database is read-only",
    sqlite3.SQLITE_IOERR: "a disk I/O error occurred",
    sqlite3.SQLITE_CANTOPEN: "the database file cannot be opened",
}
"""Primary SQLite result codes meaning the file cannot be written now: ``StorageFault`` with
``Retry-After`` ``WRITE_RETRY_AFTER``, and readiness DOWN until a probe write succeeds."""

BUSY_CODES = {
    sqlite3.SQLITE_BUSY: "the database is locked by another writer",
    sqlite3.SQLITE_LOCKED: "the database is locked by another writer",
}
"""Contention that outlasted the busy timeout: ``StorageFault`` with ``Retry-After``
``BUSY_RETRY_AFTER``; readiness is not affected (the next unit may well get the lock)."""

WRITE_RETRY_AFTER = 5
"""``Retry-After`` (s) for a file that cannot be written: an operator has to act."""
BUSY_RETRY_AFTER = 1
"""``Retry-After`` (s) for a lock held past the busy timeout."""

PROBE_KEY = "authsvc-write-probe:" + "0" * 8192
"""The key of the readiness probe's row: 8 KiB, so that inserting it needs new pages (a full
disk or a page limit shows), unlike a row that fits in a page already there."""


def primary_code(exc: sqlite3.Error) -> int:
    """The primary result code of a driver error (its extended code's low byte); 0 for an
    error the sqlite3 module raised by itself (a closed connection ...)."""
    return int(getattr(exc, "sqlite_errorcode", 0)) & 0xFF


def storage_fault(exc: sqlite3.Error) -> tuple[StorageFault, bool] | None:
    """The ``StorageFault`` for a driver error that means "cannot write or use the file now"
    (by its primary result code), with whether it is a write fault rather than contention; None
    for any other error (a constraint, a programming error), which the caller handles or lets
    through."""
    primary = primary_code(exc)
    if primary in WRITE_FAULT_CODES:
        detail = f"the database cannot write now: {WRITE_FAULT_CODES[primary]}"
        return StorageFault(detail, WRITE_RETRY_AFTER), True
    if primary in BUSY_CODES:
        return StorageFault(f"{BUSY_CODES[primary]}; retry", BUSY_RETRY_AFTER), False
    return None


class FaultRecorder:
    """What a storage's units of work report their faults to: each is logged, and a write fault
    (not contention) is remembered until a commit succeeds, so that the readiness ``ping``
    probes a write meanwhile."""

    def __init__(self) -> None:
        self._write_failed = False

    def record(self, exc: sqlite3.Error, *, write_fault: bool) -> None:
        """Log a storage fault; remember a write fault (``write_fault``) for ``healthy``."""
        log.warning("storage fault: %s: %s", getattr(exc, "sqlite_errorname", "sqlite"), exc)
        if write_fault:
            self._write_failed = True

    def committed(self) -> None:
        """A commit succeeded: the file can be written again."""
        self._write_failed = False

    def healthy(self) -> bool:
        """False from a write fault until the next successful commit."""
        return not self._write_failed
