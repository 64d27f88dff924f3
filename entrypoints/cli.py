"""The ``authsvc`` command line: ``serve``, ``migrate`` and the box operator's commands.

``authsvc purge`` deletes expired refresh tokens and rotated-token records, ended sessions and
the other expired records ``PurgeExpired`` names (docs/reference/operations.md; the provider's codes
and hosted sessions, section 15) and prints how many.

Operator commands (docs/reference/accounts.md), each opening and closing the storage like
``migrate``:

- ``authsvc create-superadmin --email E [--org ORG]``: create the first superadmin (password from
  ``$AUTHSVC_BOOTSTRAP_PASSWORD``, else asked twice on the terminal) or promote an existing user;
- ``authsvc users list [--org ORG] [--limit N]``: one line per user (id, email, role, org);
- ``authsvc users set-role EMAIL ROLE`` and ``authsvc users set-org EMAIL ORG``;
- ``authsvc users disable|enable|delete EMAIL`` (docs/reference/accounts.md): disabling ends the
user's
  sessions at once; deleting removes the user with its sessions and memberships. The last
  enabled superadmin can be neither disabled nor deleted.

Signing keys (docs/reference/operations.md; ADR 0015), in the configured key store
(``auth.key_store``):

- ``authsvc clients create NAME --scope S [--audience A] [--org ORG] [--require-dpop] | list
  [--org ORG] | rotate-secret | disable | enable | delete CLIENT_ID``: OAuth clients (
  docs/reference/oauth-and-oidc.md; ``entrypoints.cli_clients``);
- ``authsvc keys list``: one line per key: kid, alg, state (signing, pending, verifying,
  expired), when it signs from, when it stops signing, until when it verifies;
- ``authsvc keys rotate [--now]``: a new key of ``auth.algorithm``, published in the JWKS at
  once, signing ``auth.key_publish_ahead`` seconds later (``--now``: at once — for a key that
  leaked); the old key verifies until its last token expired. Announced to the running
  instances (``SigningKeysChanged``) when ``events.backend`` is a broker; else they find it at
  their next poll (``auth.key_poll_interval``);
- ``authsvc keys retire [--] KID``: withdraw a key that no longer signs, at once: it leaves the
  JWKS and its tokens are refused (a compromised key). The signing key and pending keys are
  refused. A kid is base64url (RFC 7638) and may begin with ``-``: put ``--`` before it.

They run the same use cases as the HTTP routes (``application.accounts.users``), as the
command-line operator, and those of ``application.accounts.operator``, through the container;
each group of commands has its module (``cli_users``, ``cli_clients``, ``cli_keys``).
A domain error (unknown user, bad role, last superadmin ...) prints one line
``authsvc: <detail>`` on stderr and exits with status 1; start-up errors exit with status 2.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence

from adapters.crypto.key_records import KeyOperationRefused, KeyStoreError
from adapters.crypto.mldsa import SignerUnavailable
from adapters.persistence.errors import StorageUnavailable
from domain.errors import DomainError
from entrypoints.cli_clients import add_client_commands, client_command
from entrypoints.cli_common import CliError, Command, positive_int
from entrypoints.cli_keys import add_key_commands, key_command
from entrypoints.cli_users import add_user_commands, user_command
from entrypoints.config import Config, ConfigError, check_workers, load_config
from entrypoints.container import Container, build_container
from entrypoints.serve import LOG_FORMAT

log = logging.getLogger("authsvc")

STARTUP_ERRORS = (ConfigError, CliError, StorageUnavailable, SignerUnavailable, KeyStoreError)
"""Errors whose message says what to fix: printed as one line, exit status 2, no traceback."""


def build_parser() -> argparse.ArgumentParser:
    """The ``authsvc`` command line: every subcommand and its options (argparse)."""
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
    serve.add_argument(
        "--workers", type=positive_int, metavar="N",
        help="worker processes sharing the port (default: server.workers)",
    )  # fmt: skip
    sub.add_parser("migrate", help="apply pending database migrations and exit")
    sub.add_parser(
        "purge",
        help="delete expired token records and audit events past audit.retention_days, then exit",
    )

    add_user_commands(sub)
    add_client_commands(sub)
    add_key_commands(sub)
    return parser


def _serve(
    config: Config,
    host: str | None,
    port: int | None,
    config_path: str | None = None,
    workers: int | None = None,
) -> int:
    """Run the HTTP service until SIGTERM or SIGINT, then shut down gracefully (
    docs/reference/operations.md), in one process or ``workers`` (default ``server.workers``)
    processes on one port; ``config_path`` (``--config``) is what ``/actuator/refresh`` re-reads
    (None: ``$AUTHSVC_CONFIG``). Returns the exit status. Actuator start-up errors become
    ``CliError``."""
    from entrypoints.serve import serve_one, serve_workers
    from service_actuator import ServiceActuatorError

    count = workers if workers is not None else config.server.workers
    check_workers(count, config.storage.backend, "--workers" if workers else "server.workers")
    host = host or config.server.host
    port = port if port is not None else config.server.port
    try:
        if count > 1:
            return serve_workers(config, host, port, config_path, count)
        serve_one(config, host, port, config_path)
    except ServiceActuatorError as exc:
        raise CliError(str(exc)) from None
    return 0


async def _migrate(config: Config) -> None:
    storage = build_container(config).storage()
    await storage.open()  # applies pending migrations
    await storage.close()
    print(f"migrations applied ({config.storage.backend})")


async def _purge(container: Container) -> None:
    """``purge``: what the server does every ``storage.purge_interval`` seconds, once."""
    print(f"purged {await container.purge_expired()()} expired token records")


async def _with_storage(config: Config, command: Command) -> None:
    """Open the storage (applying pending migrations), run ``command``, close the storage."""
    container = build_container(config)
    storage = container.storage()
    await storage.open()
    try:
        await command(container)
    finally:
        await storage.close()


def _operator_command(args: argparse.Namespace) -> Command:
    """The coroutine function running the operator command named by ``args``."""
    if args.command == "keys":
        return key_command(args)
    if args.command == "clients":
        return client_command(args)
    return user_command(args)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``authsvc`` script; returns the process exit status. With ``argv``
    None (run as the program), a ``serve`` that ended cleanly ends the process at once
    (``entrypoints.serve.exit_at_once``) instead of returning."""
    args = build_parser().parse_args(argv)
    # The operator's commands print their result; only warnings are logged beside it.
    level = logging.INFO if args.command in ("serve", "migrate", "purge") else logging.WARNING
    logging.basicConfig(level=level, format=LOG_FORMAT)
    try:
        config = load_config(args.config)
        if args.command == "serve":
            status = _serve(config, args.host, args.port, args.config, args.workers)
            if argv is None:  # run as the program: end without the interpreter's teardown
                from entrypoints.serve import exit_at_once

                exit_at_once(status)
            return status
        elif args.command == "migrate":
            asyncio.run(_migrate(config))
        elif args.command == "purge":
            asyncio.run(_with_storage(config, _purge))
        else:
            asyncio.run(_with_storage(config, _operator_command(args)))
    except STARTUP_ERRORS as exc:
        print(f"authsvc: {exc}", file=sys.stderr)
        return 2
    except DomainError as exc:
        print(f"authsvc: {exc.detail}", file=sys.stderr)
        return 1
    except KeyOperationRefused as exc:
        print(f"authsvc: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
