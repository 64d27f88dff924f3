"""The start log names the pages a person opens first (docs/guides/walk-through.md): the login
page, the account page, the console and the discovery document, under ``auth.issuer`` — once,
whether one process serves or a parent runs workers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.servers import Server, server_env

PAGES = (
    "sign in: http://localhost:8080/ui/login",
    "your account: http://localhost:8080/ui/account",
    "console: http://localhost:8080/ui/admin",
    "discovery: http://localhost:8080/.well-known/openid-configuration",
)


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_start_log_names_the_pages_once(tmp_path: Path, workers: str) -> None:
    env = server_env(tmp_path, {"AUTHSVC_STORAGE__SQLITE_PATH": str(tmp_path / "a.db")},
                     AUTHSVC_SERVER__WORKERS=workers)  # fmt: skip
    server = Server(env)  # auth.issuer http://localhost:8080, whatever its port
    try:
        lines = [line for line in server.log().splitlines() if "pages: " in line]
        assert len(lines) == 1, server.log()
        assert all(page in lines[0] for page in PAGES), lines[0]
    finally:
        server.stop()
