"""Real ``authsvc serve`` processes for multi-process and crash tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """One ``python -m entrypoints.cli serve`` child process on its own port."""

    def __init__(self, env: dict[str, str]) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        full_env = {**os.environ, **env, "AUTHSVC_SERVER__PORT": str(self.port)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "entrypoints.cli", "serve"],
            cwd=ROOT,
            env=full_env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self._wait_ready()

    def _wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise RuntimeError(f"server exited with {self.proc.returncode}: {err[-2000:]}")
            try:
                with urllib.request.urlopen(self.base + "/.well-known/jwks.json", timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        self.kill()
        raise RuntimeError("server did not become ready")

    def kill(self) -> None:
        """SIGKILL: no shutdown handler, no cleanup — as a crash or an OOM kill would."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        if self.proc.stderr:
            self.proc.stderr.close()

    def stop(self) -> None:
        """SIGTERM and wait."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stderr:
            self.proc.stderr.close()
