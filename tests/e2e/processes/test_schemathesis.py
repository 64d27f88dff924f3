"""Schemathesis against the service's own /openapi.json (issues 9, 17 and 29): every operation, as
an anonymous caller and with a valid bearer token of each role, on a real ``authsvc serve``
process over SQLite and over PostgreSQL, with every check (``--checks all``): no 5xx, every
status, header and body as documented, every request the schema allows accepted and every one it
forbids refused (issue 29, point 13: the document is exact). The token goes only to the
operations that declare ``bearerAuth``, as a client reading the document would send it.

The only refusals of schema-valid requests the document cannot predict are semantic ones — a
token, cursor, ceremony or code the service did not issue — listed in ``SEMANTIC_REFUSALS``, each
a documented response of its operation.

``make test`` runs a bounded number of examples per operation (``AUTHSVC_FUZZ_EXAMPLES``, default
5, without the coverage phase), each caller on one of the two backends (``_callers``);
``make fuzz`` runs many more, with it, every caller on both. Each run's counts are printed (``pytest -s`` shows them).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.servers import ROOT, Server, each_backend, server_env  # noqa: F401 - each_backend overrides the e2e fixture
from tests.soak import SOAK

pytestmark = pytest.mark.slow

PASSWORD = "fuzzing password 123"
CHECKS = "all"
DEFAULT_ACCEPTED = ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"]
"""What schemathesis takes as "accepted" for a request the schema allows (its default; 5xx is
caught by ``not_a_server_error``)."""
SEMANTIC_REFUSALS: dict[str, tuple[int, ...]] = {
    # a cursor the service did not issue
    "get_users": (422,), "get_groups": (422,), "get_oauth_clients": (422,),
    "get_audit-events": (422,), "get_invitations": (422,), "get_webhooks": (422,),
    # an unknown, used or expired token, ceremony or code
    "post_email_verify": (400,), "post_login_passkey": (400,), "post_me_passkeys": (400,),
    "post_email_change": (400,),
    "post_login_mfa": (400,), "post_me_mfa_totp_confirm": (422,),
    "post_oauth_token": (400,), "post_oauth_revoke": (400,), "post_oauth_introspect": (400,),
    # the same client authentication rules (RFC 8628, RFC 9126: two ways at once, a request
    # /oauth/authorize would refuse)
    "post_oauth_device_authorization": (400,), "post_oauth_par": (400,),
    # a member of another organization than the group's (docs/reference/accounts.md)
    "put_groups_{id}_members_{user_id}": (422,),
    # groups the service does not know, or of another organization (docs/reference/invitations.md)
    "post_invitations": (422,),
    #  an audience the service does not serve (docs/reference/oauth-and-oidc.md: registered
    # resources)
    "post_oauth_clients": (422,), "patch_oauth_clients_{client_id}": (422,),
    # the password policy's 72 UTF-8 bytes (JSON Schema counts characters), and an unknown token
    "post_register": (422,), "post_me_password": (422,), "post_password_reset": (400, 422),
    # an address the email library refuses, or the caller's current one
    "post_me_email": (422,),
    # a target that is not https, or on a private network (docs/reference/webhooks.md)
    "post_webhooks": (422,), "patch_webhooks_{id}": (422,),
}  # fmt: skip
"""Operation id → statuses that answer a schema-valid request the service cannot honour."""
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


PHASES = (
    "examples,coverage,fuzzing,stateful"
    if "AUTHSVC_FUZZ_EXAMPLES" in os.environ
    else "examples,fuzzing,stateful"
)
"""``make fuzz`` adds the coverage phase (every boundary of every schema: minutes per role)."""


def _toml_list(values: list[str]) -> str:
    return "[" + ", ".join(json.dumps(v) for v in values) + "]"


def write_config(path: Path, token: str | None) -> Path:
    """A schemathesis.toml: the bearer token for ``bearerAuth`` operations, and each
    operation's semantic refusals added to what counts as accepting a valid request."""
    lines = []
    if token:
        lines += ["[auth.openapi.bearerAuth]", f"bearer = {json.dumps(token)}", ""]
    for operation, statuses in SEMANTIC_REFUSALS.items():
        accepted = DEFAULT_ACCEPTED + [str(s) for s in statuses]
        lines += ["[[operations]]", f"include-operation-id = {json.dumps(operation)}",
                  f"checks.positive_data_acceptance.expected-statuses = {_toml_list(accepted)}",
                  ""]  # fmt: skip
    path.write_text("\n".join(lines))
    tomllib.loads(path.read_text())  # fail here, not inside schemathesis, on a bad file
    return path


def run_schemathesis(
    base: str, examples: int, token: str | None, config_dir: Path
) -> tuple[int, str]:
    """``schemathesis run`` over every operation, as the bearer of ``token`` (None:
    anonymous); (exit status, output)."""
    config_dir.mkdir(parents=True, exist_ok=True)
    config = write_config(config_dir / "schemathesis.toml", token)
    args = [
        str(Path(sys.executable).with_name("schemathesis")), "--config-file", str(config),
        "run", f"{base}/openapi.json",
        "--checks", CHECKS, "--max-examples", str(examples), "--workers", "1",
        "--phases", PHASES,
        "--generation-allow-x00", "true", "--seed", "9", "--no-color",
        "--suppress-health-check", "all", "--request-timeout", "30",
        "--generation-database", "none",
    ]  # fmt: skip
    done = subprocess.run(args, capture_output=True, text=True, check=False, timeout=1800,
                          cwd=config_dir)  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def test_semantic_refusals_are_documented_responses(
    tmp_path: Path, storage_env: dict[str, str]
) -> None:
    server = Server(server_env(tmp_path, storage_env))
    try:
        doc = _call(server.base, "GET", "/openapi.json")
    finally:
        server.stop()
    operations = {op["operationId"]: op for path in doc["paths"].values() for op in path.values()}
    for operation, statuses in SEMANTIC_REFUSALS.items():
        for status in statuses:
            assert str(status) in operations[operation]["responses"], (operation, status)


def _callers(
    tokens: dict[str | None, str | None], backend: str
) -> list[tuple[str | None, str | None]]:
    """Who calls in this run: in ``make test`` the five callers (anonymous and the four roles)
    are shared out between the two backends — anonymous, operator and superadmin on SQLite,
    viewer and org_admin on PostgreSQL — so each is fuzzed once per run; ``make fuzz`` and
    ``make soak`` run every caller on both."""
    callers = list(tokens.items())
    if "AUTHSVC_FUZZ_EXAMPLES" in os.environ or SOAK:
        return callers
    return callers[0::2] if backend == "sqlite" else callers[1::2]


@pytest.mark.timeout(900)  # five roles, about 15 s each on a quiet machine
def test_no_input_gives_a_server_error_and_every_answer_is_documented(
    tmp_path: Path, storage_env: dict[str, str], backend: str
) -> None:
    env = server_env(tmp_path, storage_env)
    examples = int(os.environ.get("AUTHSVC_FUZZ_EXAMPLES", "5"))
    server = Server(env)
    try:
        tokens: dict[str | None, str | None] = {None: None, **_tokens(server, env)}
        failures = []
        for role, token in _callers(tokens, backend):
            status, output = run_schemathesis(
                server.base, examples, token, tmp_path / f"st-{role or 'anonymous'}"
            )
            summary = [ln for ln in output.splitlines() if "passed" in ln or "failed" in ln]
            print(f"[{backend}] {role or 'anonymous'}: {summary[-1:] or output[-300:]}")
            if status != 0:
                failures.append(f"--- {role or 'anonymous'} ---\n{output[-6000:]}")
        assert "Traceback" not in server.log()
    finally:
        server.stop()
    assert not failures, "\n".join(failures)
