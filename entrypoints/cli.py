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
command-line operator, and those of ``application.accounts.operator``, through the container.
A domain error (unknown user, bad role, last superadmin ...) prints one line
``authsvc: <detail>`` on stderr and exits with status 1; start-up errors exit with status 2.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime

from adapters.crypto.key_records import KeyOperationRefused, KeyStoreError
from adapters.crypto.mldsa import SignerUnavailable
from adapters.persistence.errors import StorageUnavailable
from application.events.catalog import SigningKeysChanged
from application.shared.pagination import MAX_PAGE_LIMIT
from application.shared.settings import ALGORITHMS
from application.shared.users import ByEmail
from domain.errors import DomainError, FieldError, ValidationFailed
from domain.model import Role, User
from domain.policy import CLI_OPERATOR
from entrypoints.cli_clients import add_client_commands, client_command
from entrypoints.config import Config, ConfigError, check_workers, load_config
from entrypoints.container import Container, build_container
from entrypoints.serve import LOG_FORMAT

log = logging.getLogger("authsvc")


class CliError(Exception):
    """An error to print as one line on stderr, exit status 2 (no traceback)."""


STARTUP_ERRORS = (ConfigError, CliError, StorageUnavailable, SignerUnavailable, KeyStoreError)
"""Errors whose message says what to fix: printed as one line, exit status 2, no traceback."""

BOOTSTRAP_PASSWORD_ENV = "AUTHSVC_BOOTSTRAP_PASSWORD"  # noqa: S105 - a variable name, no secret
"""Environment variable holding the password of a superadmin created by ``create-superadmin``."""


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
        "--workers", type=_positive_int, metavar="N",
        help="worker processes sharing the port (default: server.workers)",
    )  # fmt: skip
    sub.add_parser("migrate", help="apply pending database migrations and exit")
    sub.add_parser(
        "purge",
        help="delete expired token records and audit events past audit.retention_days, then exit",
    )

    superadmin = sub.add_parser(
        "create-superadmin",
        help="create the first superadmin, or promote an existing user",
        description="Create a superadmin, or promote the existing user EMAIL (its password and "
        f"organization are kept). A new user's password comes from ${BOOTSTRAP_PASSWORD_ENV}, "
        "else from a prompt.",
    )
    superadmin.add_argument("--email", required=True, help="email of the superadmin")
    superadmin.add_argument(
        "--org", metavar="ORG", help="organization of a new user (default: auth.default_org_id)"
    )

    users = sub.add_parser("users", help="list users, set their role or organization")
    users_sub = users.add_subparsers(dest="users_command", required=True)
    listing = users_sub.add_parser("list", help="one line per user: id, email, role, org")
    listing.add_argument("--org", metavar="ORG", help="only the users of this organization")
    listing.add_argument(
        "--limit", metavar="N", type=_positive_int, help="show at most N users (default: all)"
    )
    set_role = users_sub.add_parser("set-role", help="set a user's role")
    set_role.add_argument("email", metavar="EMAIL")
    set_role.add_argument("role", metavar="ROLE", help=", ".join(r.value for r in Role))
    set_org = users_sub.add_parser(
        "set-org", help="move a user to another organization (drops its old groups)"
    )
    set_org.add_argument("email", metavar="EMAIL")
    set_org.add_argument("org", metavar="ORG")
    for name, text in (
        ("disable", "disable a user: no login, its sessions end at once"),
        ("enable", "enable a disabled user"),
        ("delete", "delete a user with its sessions and memberships"),
    ):
        users_sub.add_parser(name, help=text).add_argument("email", metavar="EMAIL")

    add_client_commands(sub)
    keys = sub.add_parser("keys", help="list, rotate or retire the signing keys")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    keys_sub.add_parser("list", help="one line per key: kid, alg, state and its times")
    rotate = keys_sub.add_parser(
        "rotate",
        help="add a key that signs auth.key_publish_ahead seconds from now",
        description="Add a key of auth.algorithm (or --alg, one of auth.algorithms). It is "
        "published in the JWKS at once and "
        "signs from auth.key_publish_ahead seconds later; the signing key stops then and keeps "
        "verifying until its last token has expired. Nobody is logged out.",
    )
    rotate.add_argument(
        "--now", action="store_true", help="sign with the new key at once (a key that leaked)"
    )
    rotate.add_argument(
        "--alg",
        choices=ALGORITHMS,
        default=None,
        help="the algorithm whose key rotates (one of auth.algorithms; default auth.algorithm)",
    )
    retire = keys_sub.add_parser(
        "retire",
        help="withdraw a key that no longer signs: its tokens are refused at once",
    )
    retire.add_argument("kid", metavar="KID")
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


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


async def _with_storage(config: Config, command: Callable[[Container], Awaitable[None]]) -> None:
    """Open the storage (applying pending migrations), run ``command``, close the storage."""
    container = build_container(config)
    storage = container.storage()
    await storage.open()
    try:
        await command(container)
    finally:
        await storage.close()


def _user_line(user: User) -> str:
    line = f"{user.id}  {user.email}  {user.role.value}  {user.org_id}"
    return line + "  disabled" if user.disabled else line


def _prompt_password() -> str:
    """The new superadmin's password, typed twice without echo.

    Raises ``ValidationFailed`` naming ``password`` when the two differ, ``CliError`` when no
    password can be read (end of input).
    """
    try:
        first = getpass.getpass("Password for the new superadmin: ")
        second = getpass.getpass("Repeat the password: ")
    except EOFError:
        raise CliError(
            f"no password given (set {BOOTSTRAP_PASSWORD_ENV} or use a terminal)"
        ) from None
    if first != second:
        raise ValidationFailed([FieldError("password", "the two passwords do not match")])
    return first


async def _create_superadmin(container: Container, email: str, org: str | None) -> None:
    """``create-superadmin``: promote ``email`` if it exists, else create it.

    The password comes from ``$AUTHSVC_BOOTSTRAP_PASSWORD``; without it, an existing user is
    promoted with no prompt, and only a new user's password is asked for (twice).
    """
    create = container.create_superadmin()
    password = os.environ.get(BOOTSTRAP_PASSWORD_ENV)
    if password is None:
        try:
            result = await create(email, None, org)
        except ValidationFailed as exc:
            if not any(e.field == "password" for e in exc.errors):
                raise
            result = await create(email, _prompt_password(), org)
    else:
        result = await create(email, password, org)
    user = result.user
    if result.created:
        print(f"created superadmin {user.email} (id {user.id}, org {user.org_id})")
    else:
        print(f"{user.email} is superadmin (id {user.id}, org {user.org_id}; password unchanged)")


async def _list_users(container: Container, org: str | None, limit: int | None) -> None:
    """``users list``: walk every page (or until ``limit`` users) and print a table with one line
    per user: id, email, role, org (ordered by id, as the listing is)."""
    list_users = container.list_users()
    users: list[User] = []
    cursor: str | None = None
    more = False
    while limit is None or len(users) < limit:
        size = MAX_PAGE_LIMIT if limit is None else min(MAX_PAGE_LIMIT, limit - len(users))
        page = await list_users(CLI_OPERATOR, limit=size, cursor=cursor, org_id=org)
        users.extend(page.items)
        cursor = page.next_cursor
        more = cursor is not None
        if not more:
            break
    rows = [(u.id, u.email, u.role.value, u.org_id) for u in users]
    _print_table(("id", "email", "role", "org"), rows)
    if more:
        print(f"(only the first {len(users)} users; raise --limit for more)", file=sys.stderr)


def _print_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


async def _set_role(container: Container, email: str, role: str) -> None:
    """``users set-role``: the operator's role change (last-superadmin rule applies)."""
    print(_user_line(await container.set_role_by_operator()(email, role)))


async def _set_org(container: Container, email: str, org: str) -> None:
    """``users set-org``: move the user; its memberships of the old organization end."""
    print(_user_line(await container.set_org_by_operator()(email, org)))


async def _set_disabled(container: Container, email: str, disabled: bool) -> None:
    """``users disable|enable``: disabling ends every session of the user."""
    print(_user_line(await container.set_disabled_by_operator()(email, disabled)))


async def _delete_user(container: Container, email: str) -> None:
    """``users delete``: the user, its sessions and memberships go."""
    canonical = container.email_normalizer()(email)
    await container.delete_user()(CLI_OPERATOR, ByEmail(canonical))
    print(f"deleted {canonical}")


ANNOUNCE_WAIT = 5.0
"""Seconds ``keys rotate|retire`` waits for the broker before giving up announcing."""


def _when(t: datetime | None) -> str:
    return "-" if t is None else t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def _keys_list(container: Container) -> None:
    """``keys list``: every key of the store, latest first, with its state now, each judged by
    its own algorithm (docs/reference/tokens-and-sessions.md): ``signing`` (one per algorithm of
    ``auth.algorithms``), ``pending`` (published ahead), ``verifying`` (retiring: its tokens may
    be live; all keys of an algorithm dropped from the list) or ``expired``."""
    signer = await asyncio.to_thread(container.signer)
    records = await signer.key_records()
    now = container.clock().now()
    signing = signer.signing_kids()
    rows = [
        (r.kid, r.alg, r.state(r.alg, now, signing.get(r.alg)), _when(r.activates_at),
         _when(r.retired_at), _when(r.verify_until))
        for r in sorted(records, key=lambda r: (r.alg, r.activates_at, r.kid), reverse=True)
    ]  # fmt: skip
    _print_table(("kid", "alg", "state", "signs_from", "signs_until", "verifies_until"), rows)


async def _announce(container: Container, event: SigningKeysChanged) -> None:
    """Tell the running instances (a broker bus); else say when they will notice."""
    bus = container.bus()
    start = getattr(bus, "start", None)
    poll = container.config().auth.key_poll_interval
    if start is None:
        print(f"(running instances pick it up within auth.key_poll_interval = {poll} s)")
        return
    await start()
    try:
        if await bus.wait_connected(ANNOUNCE_WAIT):
            await bus.publish(event)
            print("announced to the running instances")
        else:
            print(
                f"authsvc: the event broker is unreachable; running instances pick the change"
                f" up within auth.key_poll_interval = {poll} s",
                file=sys.stderr,
            )
    finally:
        await bus.close()


async def _keys_rotate(container: Container, now: bool, alg: str | None = None) -> None:
    """``keys rotate [--now] [--alg ALG]``: a new key of ``alg`` (default ``auth.algorithm``);
    the old one verifies until its tokens expired."""
    signer = await asyncio.to_thread(container.signer)
    record = await signer.rotate_keys(now=now, alg=alg)
    print(
        f"new {record.alg} key {record.kid}: in the JWKS now, signs from "
        f"{_when(record.activates_at)}"
    )
    await _announce(container, SigningKeysChanged(kids=(record.kid,), reason="rotated"))


async def _keys_retire(container: Container, kid: str) -> None:
    """``keys retire KID``: out of the JWKS and verification at once."""
    signer = await asyncio.to_thread(container.signer)
    await signer.retire_key(kid)
    print(f"key {kid} retired: no longer in the JWKS; its tokens are refused")
    await _announce(container, SigningKeysChanged(kids=(kid,), reason="retired"))


def _operator_command(args: argparse.Namespace) -> Callable[[Container], Awaitable[None]]:
    """The coroutine function running the operator command named by ``args``."""
    if args.command == "keys":
        if args.keys_command == "list":
            return _keys_list
        if args.keys_command == "rotate":
            return lambda c: _keys_rotate(c, args.now, args.alg)
        return lambda c: _keys_retire(c, args.kid)
    if args.command == "create-superadmin":
        return lambda c: _create_superadmin(c, args.email, args.org)
    if args.command == "clients":
        return client_command(args)
    if args.users_command == "list":
        return lambda c: _list_users(c, args.org, args.limit)
    if args.users_command == "set-role":
        return lambda c: _set_role(c, args.email, args.role)
    if args.users_command in ("disable", "enable"):
        return lambda c: _set_disabled(c, args.email, args.users_command == "disable")
    if args.users_command == "delete":
        return lambda c: _delete_user(c, args.email)
    return lambda c: _set_org(c, args.email, args.org)


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
