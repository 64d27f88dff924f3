"""A request that is not HTTP (a U+0000 in a header) is refused 400 by the server, logged as one
line without the offending bytes (they may be a bearer token), and never as an ERROR."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.e2e.servers import Server

pytestmark = pytest.mark.slow


def test_a_malformed_request_is_400_and_one_quiet_log_line(tmp_path: Path) -> None:
    env = {"AUTHSVC_AUTH__KEY_DIR": str(tmp_path / "keys"),
           "AUTHSVC_STORAGE__SQLITE_PATH": str(tmp_path / "a.db")}  # fmt: skip
    server = Server(env)
    try:
        with socket.create_connection(("127.0.0.1", server.port)) as conn:
            conn.sendall(b"GET /me HTTP/1.1\r\nHost: x\r\n"
                         b"Authorization: Bearer secret-token\x00tail\r\n\r\n")  # fmt: skip
            answer = conn.recv(4096)
        assert answer.startswith(b"HTTP/1.0 400") or answer.startswith(b"HTTP/1.1 400")
    finally:
        server.stop()
    log = server.log()
    assert "malformed HTTP request from 127.0.0.1 refused: BadHttpMessage" in log
    assert "secret-token" not in log
    assert "Traceback" not in log and " ERROR " not in log
