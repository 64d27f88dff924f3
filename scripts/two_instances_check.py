"""Check that two running authsvc instances share keys and sessions (docs/deploy.md).

Usage: ``python3 scripts/two_instances_check.py URL_A URL_B`` (e.g. ``http://127.0.0.1:18081``).
Standard library only. Waits up to 180 s for both to be ready (``/actuator/health/ready``),
then: both serve the same JWKS; a user registered and logged in on A is known to B (an access
token from A verifies on B); a refresh on A rotates for both (B refuses the spent refresh token
with 401 and accepts the new one). Exit status 0 when all holds, 1 otherwise (saying what).
"""

from __future__ import annotations

import json
import secrets
import sys
import time
import urllib.error
import urllib.request
from typing import Any


def call(
    base: str, path: str, body: dict[str, Any] | None = None, token: str = ""
) -> tuple[int, Any]:
    """``(status, parsed JSON body or None)`` of a GET (``body`` None) or a JSON POST."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        base + path, data=data, method="GET" if data is None else "POST"
    )
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    return status, json.loads(raw) if raw else None


def wait_ready(base: str, timeout: float = 180.0) -> float:
    """Seconds until ``base`` answers 200 on its readiness probe; SystemExit past ``timeout``."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        try:
            if call(base, "/actuator/health/ready")[0] == 200:
                return time.monotonic() - start
        except (OSError, ValueError):
            pass
        time.sleep(0.5)
    raise SystemExit(f"{base}: not ready after {timeout:.0f} s")


def expect(what: str, got: int, wanted: int) -> None:
    if got != wanted:
        raise SystemExit(f"FAIL: {what}: status {got}, expected {wanted}")
    print(f"ok: {what} ({got})")


def main(a: str, b: str) -> None:
    for base in (a, b):
        print(f"ready: {base} after {wait_ready(base):.1f} s")
    jwks_a, jwks_b = call(a, "/.well-known/jwks.json")[1], call(b, "/.well-known/jwks.json")[1]
    if jwks_a != jwks_b:
        raise SystemExit("FAIL: the two instances serve different JWKS")
    print(f"ok: one JWKS on both ({len(jwks_a['keys'])} key(s))")
    email = f"shared-{secrets.token_hex(4)}@example.com"
    user = {"email": email, "password": "correct horse battery"}
    expect("register on A", call(a, "/register", user)[0], 201)
    status, pair = call(a, "/login", user)
    expect("login on A", status, 200)
    expect("A's access token on B (/me)", call(b, "/me", token=pair["access_token"])[0], 200)
    status, rotated = call(a, "/refresh", {"refresh_token": pair["refresh_token"]})
    expect("refresh on A", status, 200)
    spent = call(b, "/refresh", {"refresh_token": pair["refresh_token"]})[0]
    expect("the refresh token spent on A, replayed on B", spent, 401)
    status, _ = call(b, "/refresh", {"refresh_token": rotated["refresh_token"]})
    # The replay above is reuse: it ends the whole session (RFC 9700 §4.14.2), so the rotated
    # token is refused too -- on B, for a session rotated on A.
    expect("the rotated token after the reuse, on B (session ended)", status, 401)
    status, pair = call(b, "/login", user)
    expect("login on B", status, 200)
    status, rotated = call(b, "/refresh", {"refresh_token": pair["refresh_token"]})
    expect("refresh on B", status, 200)
    status, _ = call(a, "/refresh", {"refresh_token": rotated["refresh_token"]})
    expect("B's rotated refresh token on A", status, 200)
    print("two instances: OK (shared keys, shared sessions, rotation seen by both)")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    main(sys.argv[1], sys.argv[2])
