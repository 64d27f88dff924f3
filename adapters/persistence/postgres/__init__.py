"""PostgreSQL storage over asyncpg (``storage.backend = "postgres"``, ``storage.postgres_dsn``).

A pool of ``min_size``..``max_size`` connections; each unit of work holds one connection and one
READ COMMITTED transaction. ``take()`` is ``DELETE ... RETURNING``: of concurrent takes of one
hash (any connection, any process) the row lock lets exactly one return the token. Times are
``timestamptz``. Driver errors become domain errors (``EmailTaken``, ``Conflict``, ``NotFound``,
``ValidationFailed`` for a value the server cannot store or compare) before they leave this
module; statements that may fail on purpose run under a savepoint or ``ON CONFLICT DO NOTHING``
so the transaction stays usable after such an error.

Storage faults (docs/reference/operations.md, ADR 0014): a connection that fails with a
connection-class error (lost, refused, server shutting down or starting, too many connections) is
discarded — terminated, never handed out again — and the error becomes ``StorageFault`` (503). A
read that failed so, in a unit that has written nothing since its last commit, is retried once on a
fresh connection: under READ COMMITTED every statement reads its own snapshot anyway, so the retry
changes nothing the unit could see. A write is never replayed: its transaction died with the
connection (nothing of it was written), or, if the commit itself was cut off, its outcome is unknown
and only the client may decide to retry. The health ``ping`` uses a connection of its own, outside
the pool, with a 1 s limit.
"""

from adapters.persistence.postgres.faults import WRITE_FAULTS, is_connection_fault
from adapters.persistence.postgres.storage import PostgresLoginAttempts, PostgresStorage

__all__ = ["WRITE_FAULTS", "PostgresLoginAttempts", "PostgresStorage", "is_connection_fault"]
