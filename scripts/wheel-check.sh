#!/usr/bin/env bash
# Build the wheel and install it into a fresh environment OUTSIDE the checkout, then run
# `authsvc --help` there: proves the distribution carries every package it needs.
set -euo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-.tools/bin/uv}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$UV" build --wheel --out-dir "$work/dist" --quiet
"$UV" venv --quiet "$work/venv"
# Pin the wheel's dependencies to the lock file's versions.
"$UV" export --frozen --no-dev --no-hashes --no-emit-project --quiet > "$work/constraints.txt"
VIRTUAL_ENV="$work/venv" "$UV" pip install --quiet -c "$work/constraints.txt" "$work"/dist/*.whl
(cd "$work" && "$work/venv/bin/authsvc" --help >/dev/null)
(cd "$work" && "$work/venv/bin/python" -c "import domain, application, adapters, entrypoints, service_actuator")
# The catalogs (.po, compiled at first use) and the mail templates ship in the wheel.
(cd "$work" && "$work/venv/bin/python" -c "
from adapters.i18n.catalogs import translations
from adapters.mail.writer import SHIPPED
assert translations('de').gettext('Sign in') == 'Anmelden'
assert (SHIPPED / 'mail' / 'verify.html').is_file()")
# The migrations (SQL files) ship in the wheel: migrate a fresh SQLite database with it.
(cd "$work" && AUTHSVC_STORAGE__SQLITE_PATH="$work/check.db" AUTHSVC_AUTH__KEY_DIR="$work/keys" \
    "$work/venv/bin/authsvc" migrate >/dev/null 2>&1)
echo "wheel-check: the built wheel installs outside the checkout; 'authsvc --help' and 'authsvc migrate' run"
