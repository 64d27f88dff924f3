#!/usr/bin/env bash
# First contact, as a new user meets the project: a fresh clone of this repository in a temporary
# folder, `make run` there with an empty HOME (so nothing cached or installed by hand helps: uv,
# the virtual environment and every dependency come from PyPI), /actuator/health/live, the
# README's curl walk-through with every step's status checked, then SIGTERM and a clean exit.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
server=""
cleanup() {
    if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then kill -KILL -- "-$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

git clone --quiet "$repo" "$work/authsvc"
mkdir "$work/home"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cd "$work/authsvc"
echo "first-contact: git clone + make run (HOME empty) on port $port"
# Its own process group, so SIGTERM reaches make, uv and authsvc alike.
HOME="$work/home" AUTHSVC_SERVER__PORT="$port" setsid make run >"$work/run.log" 2>&1 &
server=$!

deadline=$((SECONDS + 600))
until curl -fs "http://127.0.0.1:$port/actuator/health/live" >/dev/null; do
    if ! kill -0 "$server" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
        echo "first-contact: make run did not serve"; tail -n 40 "$work/run.log"; exit 1
    fi
    sleep 1
done
echo "first-contact: live after $SECONDS s"

status=0
python3 scripts/readme_walkthrough.py README.md "$port" >"$work/walk.log" || status=1
tail -n 1 "$work/walk.log"
[ "$status" -eq 0 ] || { cat "$work/walk.log"; tail -n 40 "$work/run.log"; exit 1; }

kill -TERM -- "-$server"
for _ in $(seq 1 30); do
    grep -q "authsvc stopped" "$work/run.log" && break
    sleep 0.5
done
if ! grep -q "authsvc stopped" "$work/run.log" || grep -q Traceback "$work/run.log"; then
    echo "first-contact: the server did not stop cleanly on SIGTERM"; tail -n 40 "$work/run.log"; exit 1
fi
wait "$server" 2>/dev/null || true  # make reports the signal; the server itself stopped cleanly
server=""
echo "first-contact: OK (fresh clone, empty HOME: make run served, README walk-through passed, SIGTERM stopped it)"
