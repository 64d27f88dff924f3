"""How hard the repeated tests push: ``make test`` runs a bounded number of rounds and examples,
``make soak`` many more (``AUTHSVC_TEST_SOAK=1``). The behaviour each test asserts is the same
either way; a soak run only tries more kill timings and more generated inputs."""

from __future__ import annotations

import os

SOAK = os.environ.get("AUTHSVC_TEST_SOAK", "") not in ("", "0")
"""True in ``make soak``."""

KILL_ROUNDS = 12 if SOAK else 3
"""Kill-and-restart rounds of a crash test (each round: a request, a SIGKILL at a random moment
of it, the checks, a restart on the same database)."""

EXAMPLES = 2000 if SOAK else 150
"""Examples per property of the hypothesis tests that fuzz the request parsers."""
