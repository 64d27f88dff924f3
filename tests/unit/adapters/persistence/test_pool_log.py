"""``PoolLogFilter`` (adapters/persistence/postgres/pool_log.py): asyncpg's "Failed to restore
the pool connection floor" warning, logged with a traceback on every retry while the database is
away, becomes one line naming the error, with no traceback and no password."""

from __future__ import annotations

import logging
import socket

import pytest

from adapters.persistence.postgres.pool_log import (
    ASYNCPG_POOL_LOGGER,
    PoolLogFilter,
    install_pool_log_filter,
)

DSN = "postgresql://authsvc:s3cret-pw@db:5432/authsvc"


def test_a_pool_warning_with_an_exception_is_one_line_without_traceback_or_password(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = logging.getLogger(ASYNCPG_POOL_LOGGER)
    install_pool_log_filter()
    install_pool_log_filter()  # once per process (another test's storage may have put it)
    assert sum(isinstance(f, PoolLogFilter) for f in logger.filters) == 1
    with caplog.at_level(logging.WARNING, ASYNCPG_POOL_LOGGER):
        try:
            raise socket.gaierror(-3, "Temporary failure in name resolution")
        except OSError:
            logger.warning("Failed to restore the pool connection floor; retrying", exc_info=True)
        try:
            raise ConnectionError(f"cannot reach {DSN}")
        except ConnectionError:
            logger.warning("Failed to restore the pool connection floor; retrying", exc_info=True)
        logger.warning("a plain record")
    first, second, plain = caplog.records
    assert first.getMessage() == (
        "Failed to restore the pool connection floor; retrying: gaierror: "
        "[Errno -3] Temporary failure in name resolution"
    )
    assert first.exc_info is None and first.exc_text is None
    assert "s3cret-pw" not in second.getMessage() and "***" in second.getMessage()
    assert "Traceback" not in caplog.text
    assert plain.getMessage() == "a plain record"
