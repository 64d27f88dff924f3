"""Fault injection for the storage tests (issue 21): a TCP proxy that can cut PostgreSQL off,
backends terminated by ``pg_terminate_backend``, a small filesystem that fills up, SQLite's own
limits."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from adapters.persistence.sqlite import SqliteStorage


def with_application_name(dsn: str, name: str) -> str:
    """``dsn`` with ``application_name=name``: the backends of one test are then found (and
    terminated) by that name, never another worker's."""
    return f"{dsn}{'&' if '?' in dsn else '?'}application_name={name}"


def new_application_name() -> str:
    """A fresh application name, ``authsvc_fault_<hex>``."""
    return f"authsvc_fault_{secrets.token_hex(5)}"


async def terminate_backends(dsn: str, application_name: str) -> int:
    """``pg_terminate_backend`` every backend of ``application_name`` (as a server restart or
    an operator would); returns how many."""
    conn = await asyncpg.connect(dsn)
    try:
        n = await conn.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE application_name = $1 AND pid <> pg_backend_pid()",
            application_name,
        )
        return int(n)
    finally:
        await conn.close()


class TcpProxy:
    """Forwards ``127.0.0.1:port`` to ``target`` (host, port). ``cut()`` is an outage: every
    forwarded connection is reset and new ones are refused (nothing listens); ``restore()``
    listens on the same port again."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @classmethod
    def for_dsn(cls, dsn: str) -> TcpProxy:
        """A proxy to the server of a ``postgresql://`` DSN."""
        parts = urlsplit(dsn)
        return cls((parts.hostname or "127.0.0.1", parts.port or 5432))

    def dsn(self, dsn: str) -> str:
        """``dsn`` pointed at this proxy."""
        parts = urlsplit(dsn)
        userinfo = parts.netloc.rpartition("@")[0]
        netloc = f"{userinfo}@127.0.0.1:{self.port}" if userinfo else f"127.0.0.1:{self.port}"
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))

    async def start(self) -> None:
        """Listen (on a free port the first time, on the same port afterwards)."""
        self._server = await asyncio.start_server(
            self._serve, "127.0.0.1", self.port, reuse_address=True
        )
        self.port = self._server.sockets[0].getsockname()[1]

    restore = start

    async def cut(self) -> None:
        """Stop listening and reset every forwarded connection."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._writers |= {writer, up_writer}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, RuntimeError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self._writers -= {writer, up_writer}


@contextlib.contextmanager
def small_filesystem(path: Path, size: str = "4m") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted on ``path``, unmounted afterwards. Mounting needs root and
    the right to mount (not every container grants it): the test skips where it cannot."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    try:
        result = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
            capture_output=True,
            check=False,
        )
    except OSError as exc:
        pytest.skip(f"cannot mount a tmpfs: {exc}")
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {result.stderr.decode(errors='replace').strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


def fill(directory: Path) -> Path:
    """Write a file in ``directory`` until the filesystem is full; returns it (delete it to
    free the space)."""
    filler = directory / "filler"
    chunk = b"\0" * 4096
    with open(filler, "wb", buffering=0) as f:
        with contextlib.suppress(OSError):
            while True:
                f.write(chunk)
    return filler


async def sqlite_pragma(storage: SqliteStorage, sql: str) -> int:
    """Run a pragma on the storage's connections that write, between its units of work: the
    aiosqlite one and the writer on the loop's thread (ADR 0022); the first column of the
    aiosqlite connection's answer, or 0."""
    async with storage._locked() as conn, conn.execute(sql) as cur:
        assert storage._writer is not None
        storage._writer.execute(sql).fetchall()
        row = await cur.fetchone()
        return int(row[0]) if row else 0


SQLITE_NO_PAGE_LIMIT = 1073741823
"""``PRAGMA max_page_count`` back to (about) no limit."""
