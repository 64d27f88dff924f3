"""The ``authsvc`` command line: ``serve``, ``migrate`` (and the operator commands)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence

from adapters.crypto.jwt_signer import SignerUnavailable
from adapters.crypto.keystore import KeyStoreError
from adapters.persistence.errors import StorageUnavailable
from entrypoints.config import Config, ConfigError, load_config
from entrypoints.container import build_container

log = logging.getLogger("authsvc")


class CliError(Exception):
    """An error to print as one line on stderr, exit status 2 (no traceback)."""


STARTUP_ERRORS = (ConfigError, CliError, StorageUnavailable, SignerUnavailable, KeyStoreError)
"""Errors whose message says what to fix: printed as one line, exit status 2, no traceback."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="authsvc",
        description="authsvc: authentication service (JWT RS256 / ML-DSA) with actuator endpoints",
    )
    parser.add_argument("--config", metavar="PATH", help="TOML configuration file "
                        "(default: $AUTHSVC_CONFIG, else built-in defaults)")  # fmt: skip
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host", help="listen address (default: server.host)")
    serve.add_argument("--port", type=int, help="listen port (default: server.port)")
    sub.add_parser("migrate", help="apply pending database migrations and exit")
    return parser


def _serve(config: Config, host: str | None, port: int | None) -> None:
    from aiohttp import web

    from entrypoints.http.app import create_app

    app = create_app(build_container(config))
    web.run_app(
        app,
        host=host or config.server.host,
        port=port if port is not None else config.server.port,
        access_log=None,
        print=lambda msg: log.info("%s", msg),
    )


async def _migrate(config: Config) -> None:
    uow = build_container(config).uow()
    await uow.open()  # applies pending migrations
    await uow.close()
    print(f"migrations applied ({config.storage.backend})")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``authsvc`` script; returns the process exit status."""
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        config = load_config(args.config)
        if args.command == "serve":
            _serve(config, args.host, args.port)
        elif args.command == "migrate":
            asyncio.run(_migrate(config))
    except STARTUP_ERRORS as exc:
        print(f"authsvc: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
