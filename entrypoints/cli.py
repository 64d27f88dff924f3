"""The ``authsvc`` command line: ``serve``, ``migrate`` and the box operator's commands.

Operator commands (contract section 3), each opening and closing the storage like ``migrate``:

- ``authsvc create-superadmin --email E [--org ORG]``: create the first superadmin (password from
  ``$AUTHSVC_BOOTSTRAP_PASSWORD``, else asked twice on the terminal) or promote an existing user;
- ``authsvc users list [--org ORG] [--limit N]``: one line per user (id, email, role, org);
- ``authsvc users set-role EMAIL ROLE`` and ``authsvc users set-org EMAIL ORG``.

They run the same use cases as the HTTP routes (``application.admin``) through the container.
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

from adapters.crypto.jwt_signer import SignerUnavailable
from adapters.crypto.keystore import KeyStoreError
from adapters.persistence.errors import StorageUnavailable
from application.admin import MAX_PAGE_LIMIT, OPERATOR_ACTOR_ID
from domain.errors import DomainError, FieldError, ValidationFailed
from domain.model import Role, User
from domain.policy import Principal
from entrypoints.config import Config, ConfigError, load_config
from entrypoints.container import Container, build_container

log = logging.getLogger("authsvc")


class CliError(Exception):
    """An error to print as one line on stderr, exit status 2 (no traceback)."""


STARTUP_ERRORS = (ConfigError, CliError, StorageUnavailable, SignerUnavailable, KeyStoreError)
"""Errors whose message says what to fix: printed as one line, exit status 2, no traceback."""

BOOTSTRAP_PASSWORD_ENV = "AUTHSVC_BOOTSTRAP_PASSWORD"  # noqa: S105 - a variable name, no secret
"""Environment variable holding the password of a superadmin created by ``create-superadmin``."""


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
    config: Config, host: str | None, port: int | None, config_path: str | None = None
) -> None:
    """Run the HTTP service; ``config_path`` (``--config``) is what ``/actuator/refresh``
    re-reads (None: ``$AUTHSVC_CONFIG``). Actuator start-up errors become ``CliError``."""
    from aiohttp import web

    from entrypoints.http.app import create_app
    from service_actuator import ServiceActuatorError

    try:
        app = create_app(build_container(config, config_path=config_path))
    except ServiceActuatorError as exc:
        raise CliError(str(exc)) from None
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


async def _with_storage(config: Config, command: Callable[[Container], Awaitable[None]]) -> None:
    """Open the storage (applying pending migrations), run ``command``, close the storage."""
    container = build_container(config)
    uow = container.uow()
    await uow.open()
    try:
        await command(container)
    finally:
        await uow.close()


def _operator() -> Principal:
    """The box operator acting through the CLI: trusted, across organizations."""
    return Principal(user_id=OPERATOR_ACTOR_ID, role=Role.SUPERADMIN, org_id="")


def _user_line(user: User) -> str:
    return f"{user.id}  {user.email}  {user.role.value}  {user.org_id}"


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
        page = await list_users(_operator(), limit=size, cursor=cursor, org_id=org)
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


def _operator_command(args: argparse.Namespace) -> Callable[[Container], Awaitable[None]]:
    """The coroutine function running the operator command named by ``args``."""
    if args.command == "create-superadmin":
        return lambda c: _create_superadmin(c, args.email, args.org)
    if args.users_command == "list":
        return lambda c: _list_users(c, args.org, args.limit)
    if args.users_command == "set-role":
        return lambda c: _set_role(c, args.email, args.role)
    return lambda c: _set_org(c, args.email, args.org)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``authsvc`` script; returns the process exit status."""
    args = _parser().parse_args(argv)
    # The operator's commands print their result; only warnings are logged beside it.
    level = logging.INFO if args.command in ("serve", "migrate") else logging.WARNING
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        config = load_config(args.config)
        if args.command == "serve":
            _serve(config, args.host, args.port, args.config)
        elif args.command == "migrate":
            asyncio.run(_migrate(config))
        else:
            asyncio.run(_with_storage(config, _operator_command(args)))
    except STARTUP_ERRORS as exc:
        print(f"authsvc: {exc}", file=sys.stderr)
        return 2
    except DomainError as exc:
        print(f"authsvc: {exc.detail}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
