# authsvc — `make run` starts the service (SQLite, no config needed); `make test` runs every check.
# A fresh machine needs only python3 (with venv), make and git: uv comes from PyPI into .tools/.
PYTHON ?= python3
UV_VERSION := 0.13.8
UV := .tools/bin/uv
export UV_PYTHON_DOWNLOADS := never
export UV_PYTHON := $(PYTHON)

.PHONY: run image image-base image-test test docs lint typecheck imports unit wheel-check soak bench bench-code-flow bench-scale migrate fuzz clean i18n

$(UV):
	$(PYTHON) -m venv .tools
	.tools/bin/pip install --quiet uv==$(UV_VERSION)

.venv/.synced: $(UV) pyproject.toml uv.lock
	$(UV) sync --frozen --extra metrics --no-editable --reinstall-package authsvc
	touch $@

# `make run` needs the runtime dependencies only (no dev group: no pytest, mypy, Playwright...);
# --inexact keeps whatever `make test` installed. `make test` installs the rest (.venv/.synced).
.venv/.runtime: $(UV) pyproject.toml uv.lock
	$(UV) sync --frozen --no-dev --extra metrics --no-editable --inexact --reinstall-package authsvc
	touch $@

# Re-install our own (non-editable) package so its metadata lists exactly the shipped files.
.venv/.synced .venv/.runtime: $(shell find domain application adapters entrypoints service_actuator -name '*.py' -o -name '*.sql' -o -name '*.html' -o -name '*.txt' -o -name '*.po' -o -name '*.css' -o -name '*.js' 2>/dev/null)

run: .venv/.runtime
	$(UV) run --frozen --no-sync authsvc serve

migrate: .venv/.runtime
	$(UV) run --frozen --no-sync authsvc migrate

lint: .venv/.synced
	$(UV) run --frozen --no-sync ruff check .
	$(UV) run --frozen --no-sync ruff format --check .

typecheck: .venv/.synced
	$(UV) run --frozen --no-sync mypy

imports: .venv/.synced
	$(UV) run --frozen --no-sync lint-imports

# The languages (docs/guides/languages.md): re-extract adapters/i18n/locales/messages.pot from the
# sources (babel.cfg) and update every .po (new texts arrive untranslated; translate them in
# adapters/i18n/locales/<locale>/LC_MESSAGES/messages.po). No .mo: compiled at first use (ADR 0045).
i18n: .venv/.synced
	$(UV) run --frozen --no-sync python scripts/i18n.py

# The documentation site (mkdocs.yml, docs/) into site/ (gitignored); --strict fails on a broken
# link or anchor, or a page left out of the nav.
docs: .venv/.synced
	NO_MKDOCS_2_WARNING=1 $(UV) run --frozen --no-sync mkdocs build --strict -d site

# Independent suites in parallel: one pytest-xdist worker per core.
unit: .venv/.synced
	$(UV) run --frozen --no-sync pytest -q -n auto --dist worksteal

# Build the wheel and install it into a fresh environment outside the checkout.
wheel-check: $(UV)
	bash scripts/wheel-check.sh

test: lint typecheck imports docs unit wheel-check

# A long schemathesis run (every operation, every role, SQLite and PostgreSQL when
# AUTHSVC_TEST_POSTGRES_DSN is set): FUZZ_EXAMPLES examples per operation.
FUZZ_EXAMPLES ?= 300
fuzz: .venv/.synced
	AUTHSVC_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(UV) run --frozen --no-sync pytest -q -s \
		-p no:cacheprovider --timeout 0 tests/e2e/processes/test_schemathesis.py

# The repeated tests pushed harder (tests/soak.py): twelve kill-and-restart rounds per crash test,
# 2,000 examples per parser property, every schemathesis caller on both backends.
soak: .venv/.synced
	AUTHSVC_TEST_SOAK=1 $(UV) run --frozen --no-sync pytest -q -p no:cacheprovider --timeout 0 \
		tests/e2e/processes/test_processes.py tests/e2e/processes/test_audit_processes.py \
		tests/unit/entrypoints/test_json_body.py tests/e2e/processes/test_schemathesis.py

bench: .venv/.synced
	$(UV) run --frozen --no-sync python -m bench.run

bench-code-flow: .venv/.synced
	$(UV) run --frozen --no-sync python -m bench.code_flow

# Issue #35: the hot and admin paths at 0, 100k and 1M users (seeds 28M rows at 1M: 15-45 min,
# kept for the next run; cap it with BENCH_SCALE_ARGS="--sizes 0,100000 --rounds 3"), then
# /refresh p99 during a purge of 5M rows. Needs PostgreSQL: AUTHSVC_TEST_POSTGRES_DSN.
# Not part of `make test`.
BENCH_SCALE_ARGS ?= --rounds 3
bench-scale: .venv/.synced
	$(UV) run --frozen --no-sync python -m bench.scale $(BENCH_SCALE_ARGS)
	$(UV) run --frozen --no-sync python -m bench.scale --housekeeping $(BENCH_SCALE_HK_ARGS)

# The container image (Containerfile, docs/deploy.md) with podman; BASE=python:3.11-slim where a
# registry is reachable, else a Debian base built here with mmdebstrap (scripts/image-base.sh).
image:
	bash scripts/image.sh

image-base:
	bash scripts/image-base.sh

# Not part of `make test`: the image as uid 10001 on a read-only root filesystem (the README's
# walk-through), the Kubernetes demo overlay under `podman kube play` and compose.yaml under
# podman-compose (two instances sharing keys and sessions, drained on stop).
image-test: image
	bash scripts/image-test.sh

clean:
	rm -rf .venv .tools dist site .pytest_cache .mypy_cache .ruff_cache
