"""SQLite storage over aiosqlite (``storage.backend = "sqlite"``, file ``storage.sqlite_path``).

One connection per ``SqliteStorage``, guarded by an ``asyncio.Lock``: units of work of one
process run one at a time. Each unit is a ``BEGIN IMMEDIATE`` transaction, so it holds SQLite's
write lock from its start and several processes sharing the file stay atomic (a waiting process
retries for ``busy_timeout`` ms). The file is in WAL mode. Times are stored as integer
microseconds since the Unix epoch and read back as timezone-aware UTC datetimes.

Storage faults (docs/reference/operations.md, ADR 0014): ``SQLITE_FULL``, ``SQLITE_READONLY``,
``SQLITE_IOERR``, ``SQLITE_CANTOPEN``, and ``SQLITE_BUSY``/``SQLITE_LOCKED`` once the busy
timeout has passed become ``StorageFault`` (503); the unit's transaction is rolled back (SQLite
may have done so itself), so nothing of it is written, and the unit is finished: later
statements in it raise ``StorageFault`` too. After a fault that is not contention, ``ping`` (the
readiness check) also commits a small probe write, and fails until one succeeds.
"""

from adapters.persistence.sqlite.faults import storage_fault
from adapters.persistence.sqlite.storage import SqliteLoginAttempts, SqliteStorage

__all__ = ["SqliteLoginAttempts", "SqliteStorage", "storage_fault"]
