"""A script in a fresh Python interpreter (nothing imported yet), for tests of what importing a
module loads: the checkout on ``PYTHONPATH``, the script's JSON on stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]


def run_fresh(script: str, *args: str, unset: tuple[str, ...] = ()) -> Any:
    """Run ``script`` (with ``args`` in ``sys.argv[1:]``) in a new interpreter from the
    checkout, without the environment variables ``unset``; assert it exited 0 and return the
    JSON it printed."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    for name in unset:
        env.pop(name, None)
    completed = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)
