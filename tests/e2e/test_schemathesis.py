"""Schemathesis against the service's own /openapi.json (issues 9 and 17): every operation, as an
anonymous caller and with a valid bearer token of each role, on a real ``authsvc serve`` process
over SQLite and over PostgreSQL. Checks: no 5xx (``not_a_server_error``), every status documented
(``status_code_conformance``), every body as documented (``response_schema_conformance``).

``make test`` runs a bounded number of examples per operation (``AUTHSVC_FUZZ_EXAMPLES``, default
10); ``make fuzz`` runs many more. Each run's counts are printed (``pytest -s`` shows them).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.servers import ROOT, Server, each_backend, server_env  # noqa: F401 - each_backend overrides the e2e fixture

pytestmark = pytest.mark.slow

PASSWORD = "fuzzing password 123"
CHECKS = "not_a_server_error,status_code_conformance,response_schema_conformance"
ROLES = ("viewer", "operator", "org_admin", "superadmin")


def _call(base: str, method: str, path: str, body: dict[str, Any] | None = None,
          token: str | None = None) -> Any:  # fmt: skip
    req = urllib.request.Request(base + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None)  # fmt: skip
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=10) as resp:
        raw = resp.read()
    return json.loads(raw) if raw else None


def _tokens(server: Server, env: dict[str, str]) -> dict[str, str]:
    """An access token per role (the superadmin from the command line, the others promoted)."""
    created = subprocess.run(
        [sys.executable, "-m", "entrypoints.cli", "create-superadmin", "--email", "root@example.com"],
        cwd=ROOT, env={**os.environ, **env, "AUTHSVC_BOOTSTRAP_PASSWORD": PASSWORD},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    login = {"email": "root@example.com", "password": PASSWORD}
    tokens = {"superadmin": _call(server.base, "POST", "/login", login)["access_token"]}
    for role in ROLES[:-1]:
        email = f"{role}@example.com"
        user = _call(server.base, "POST", "/register", {"email": email, "password": PASSWORD})
        _call(server.base, "PUT", f"/users/{user['id']}/role", {"role": role}, tokens["superadmin"])
        login = {"email": email, "password": PASSWORD}
        tokens[role] = _call(server.base, "POST", "/login", login)["access_token"]
    return tokens


def run_schemathesis(base: str, examples: int, token: str | None) -> tuple[int, str]:
    """``schemathesis run`` over every operation; (exit status, output)."""
    args = [
        str(Path(sys.executable).with_name("schemathesis")), "run", f"{base}/openapi.json",
        "--checks", CHECKS, "--max-examples", str(examples), "--workers", "1",
        "--generation-allow-x00", "true", "--seed", "9", "--no-color",
        "--suppress-health-check", "all", "--request-timeout", "30",
        "--generation-database", "none",
    ]  # fmt: skip
    if token:
        args += ["--header", f"Authorization: Bearer {token}"]
    done = subprocess.run(args, capture_output=True, text=True, check=False, timeout=1800)
    return done.returncode, done.stdout + done.stderr


def test_no_input_gives_a_server_error_and_every_answer_is_documented(
    tmp_path: Path, storage_env: dict[str, str], backend: str
) -> None:
    env = server_env(tmp_path, storage_env)
    examples = int(os.environ.get("AUTHSVC_FUZZ_EXAMPLES", "10"))
    server = Server(env)
    try:
        tokens: dict[str | None, str | None] = {None: None, **_tokens(server, env)}
        failures = []
        for role, token in tokens.items():
            status, output = run_schemathesis(server.base, examples, token)
            summary = [ln for ln in output.splitlines() if "passed" in ln or "failed" in ln]
            print(f"[{backend}] {role or 'anonymous'}: {summary[-1:] or output[-300:]}")
            if status != 0:
                failures.append(f"--- {role or 'anonymous'} ---\n{output[-6000:]}")
        assert "Traceback" not in server.log()
    finally:
        server.stop()
    assert not failures, "\n".join(failures)
