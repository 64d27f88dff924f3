"""Real ``authsvc serve`` processes for multi-process and crash tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(
    name="backend", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def each_backend(request: pytest.FixtureRequest) -> str:
    """Process tests run once per storage backend (the signing algorithm does not matter for
    them). Import it into a test module to override the e2e ``backend``."""
    return request.param  # type: ignore[no-any-return]


def server_env(tmp_path: Path, storage_env: dict[str, str], **settings: str) -> dict[str, str]:
    """A server process's environment: keys in ``tmp_path``, bcrypt cost 4, the e2e storage,
    plus ``settings`` (``AUTHSVC_...`` names)."""
    return {"AUTHSVC_AUTH__KEY_DIR": str(tmp_path / "keys"), "AUTHSVC_AUTH__BCRYPT_ROUNDS": "4",
            **storage_env, **settings}  # fmt: skip


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """One ``python -m entrypoints.cli serve`` child process on its own port."""

    def __init__(
        self, env: dict[str, str], port: int | None = None, *, port_issuer: bool = False
    ) -> None:
        """``port``: one the caller chose (to name it in ``auth.issuer``); default a free one.
        The instances of a test stand for one deployment behind one address: their
        ``auth.issuer`` is ``http://localhost:8080`` whatever their ports, unless ``env`` sets
        one, or ``port_issuer`` leaves it to its default (``http://localhost:<port>``)."""
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        # No limit on writes from anyone unless the test sets one: every client here is
        # 127.0.0.1, standing for many users.
        issuer = {} if port_issuer else {"AUTHSVC_AUTH__ISSUER": "http://localhost:8080"}
        full_env = {**os.environ, "AUTHSVC_SERVER__ANONYMOUS_WRITE_RATE": "0", **issuer, **env,
                    "AUTHSVC_SERVER__PORT": str(self.port)}  # fmt: skip
        # A file, not a pipe: a pipe nobody reads fills up (64 KiB of log lines) and blocks the
        # server mid-request.
        self._log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "entrypoints.cli", "serve"],
            cwd=ROOT,
            env=full_env,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
            # Its own process group: ``kill`` ends the workers of ``--workers N`` with it, so
            # none outlives its test (and writes into the next test's database).
            start_new_session=True,
        )
        self.wait_ready()

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._close_log()
                err = self.log()
                raise RuntimeError(f"server exited with {self.proc.returncode}: {err[-2000:]}")
            try:
                with urllib.request.urlopen(self.base + "/.well-known/jwks.json", timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        self.kill()
        raise RuntimeError("server did not become ready")

    def log(self) -> str:
        """Everything the server wrote on stderr so far (all of it, once it has stopped)."""
        if self._log.closed:
            return self._final_log
        self._log.seek(0)
        return self._log.read().decode(errors="replace")

    def _close_log(self) -> None:
        if not self._log.closed:
            self._final_log = self.log()
            self._log.close()

    def kill(self) -> None:
        """SIGKILL to the server and its workers: no shutdown handler, no cleanup — as a crash
        or an OOM kill of the container would."""
        self._kill_group()
        self.proc.wait(timeout=10)
        self._close_log()

    def _kill_group(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:  # the group is gone
            pass

    def stop(self) -> None:
        """SIGTERM and wait (the server stops its workers); then SIGKILL to whatever of its
        process group is left."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._kill_group()
        self._close_log()
