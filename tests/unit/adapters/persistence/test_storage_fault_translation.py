"""Which driver errors are storage faults (issue 21, ADR 0014), and how the HTTP edge answers
one: 503 ``storage_unavailable`` problem+json with ``Retry-After``."""

from __future__ import annotations

import sqlite3

import asyncpg
import orjson
import pytest

from adapters.persistence.postgres import WRITE_FAULTS, is_connection_fault
from adapters.persistence.sqlite import storage_fault
from domain.errors import StorageFault
from entrypoints.http.problems import domain_problem


def _sqlite_error(code: int, message: str = "x") -> sqlite3.OperationalError:
    exc = sqlite3.OperationalError(message)
    exc.sqlite_errorcode = code  # type: ignore[attr-defined]
    return exc


@pytest.mark.parametrize(
    ("code", "words", "write_fault", "retry_after"),
    [
        (sqlite3.SQLITE_FULL, "full", True, 5),
        (sqlite3.SQLITE_READONLY, "read-only", True, 5),
        (sqlite3.SQLITE_READONLY | (5 << 8), "read-only", True, 5),  # SQLITE_READONLY_DBMOVED
        (sqlite3.SQLITE_IOERR, "I/O", True, 5),
        (sqlite3.SQLITE_IOERR | (3 << 8), "I/O", True, 5),  # SQLITE_IOERR_WRITE
        (sqlite3.SQLITE_CANTOPEN, "opened", True, 5),
        (sqlite3.SQLITE_BUSY, "locked", False, 1),
        (sqlite3.SQLITE_LOCKED, "locked", False, 1),
    ],
)
def test_sqlite_codes_that_are_faults(
    code: int, words: str, write_fault: bool, retry_after: int
) -> None:
    found = storage_fault(_sqlite_error(code))
    assert found is not None
    fault, is_write = found
    assert words in fault.detail and is_write is write_fault and fault.retry_after == retry_after


@pytest.mark.parametrize("code", [sqlite3.SQLITE_ERROR, sqlite3.SQLITE_CONSTRAINT, None])
def test_sqlite_errors_that_are_not_faults(code: int | None) -> None:
    exc = sqlite3.OperationalError("no such table: x")
    if code is not None:
        exc.sqlite_errorcode = code  # type: ignore[attr-defined]
    assert storage_fault(exc) is None


@pytest.mark.parametrize(
    "exc",
    [
        ConnectionRefusedError(111, "refused"),
        ConnectionResetError(),
        TimeoutError(),
        asyncpg.ConnectionDoesNotExistError("closed in the middle of operation"),
        asyncpg.AdminShutdownError("terminating connection due to administrator command"),
        asyncpg.CannotConnectNowError("the database system is starting up"),
        asyncpg.TooManyConnectionsError("too many clients"),
        asyncpg.InternalClientError("cannot switch to state 11"),
    ],
)
def test_postgres_connection_faults(exc: BaseException) -> None:
    assert is_connection_fault(exc)


class _Closed:
    def is_closed(self) -> bool:
        return True


class _Open:
    def is_closed(self) -> bool:
        return False


def test_postgres_interface_errors_are_faults_only_on_a_closed_connection() -> None:
    exc = asyncpg.InterfaceError("connection is closed")
    assert is_connection_fault(exc, _Closed())
    assert not is_connection_fault(exc, _Open())
    assert not is_connection_fault(exc)
    for other in (asyncpg.UniqueViolationError("dup"), asyncpg.DataError("bad"), ValueError()):
        assert not is_connection_fault(other, _Closed())


def test_postgres_write_faults_are_not_connection_faults() -> None:
    for cls in WRITE_FAULTS:
        assert not is_connection_fault(cls("x"))


def test_a_storage_fault_is_503_with_retry_after() -> None:
    resp = domain_problem(StorageFault("the database cannot write now: the disk is full", 5))
    assert resp.status == 503
    assert resp.headers["Retry-After"] == "5"
    assert resp.content_type == "application/problem+json"
    assert resp.body is not None
    body = orjson.loads(resp.body)  # type: ignore[arg-type]
    assert body == {
        "type": "about:blank",
        "title": "Service Unavailable",
        "status": 503,
        "detail": "the database cannot write now: the disk is full",
        "code": "storage_unavailable",
    }
    assert StorageFault(retry_after=0).retry_after == 1
