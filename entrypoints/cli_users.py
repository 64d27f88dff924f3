"""``authsvc create-superadmin`` and ``authsvc users list | set-role | set-org | disable |
enable | delete`` (docs/reference/accounts.md): the users from the command line, run as the box
operator (``CLI_OPERATOR``) through the use cases of ``application.accounts.users`` and
``application.accounts.operator``; the last-superadmin rule applies."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from typing import TYPE_CHECKING

from application.shared.pagination import MAX_PAGE_LIMIT
from application.shared.users import ByEmail
from domain.errors import FieldError, ValidationFailed
from domain.model import Role, User
from domain.policy import CLI_OPERATOR
from entrypoints.cli_common import CliError, Command, positive_int, print_table

if TYPE_CHECKING:
    from entrypoints.container import Container

__all__ = ["BOOTSTRAP_PASSWORD_ENV", "add_user_commands", "user_command"]

BOOTSTRAP_PASSWORD_ENV = "AUTHSVC_BOOTSTRAP_PASSWORD"  # noqa: S105 - a variable name, no secret
"""Environment variable holding the password of a superadmin created by ``create-superadmin``."""


def add_user_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``create-superadmin`` and ``users`` with its sub-commands on the top-level
    parser's ``sub``."""
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
        "--limit", metavar="N", type=positive_int, help="show at most N users (default: all)"
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


def user_command(args: argparse.Namespace) -> Command:
    """The coroutine function running the ``create-superadmin`` or ``users`` command of
    ``args``."""
    if args.command == "create-superadmin":
        return lambda c: _create_superadmin(c, args.email, args.org)
    if args.users_command == "list":
        return lambda c: _list_users(c, args.org, args.limit)
    if args.users_command == "set-role":
        return lambda c: _set_role(c, args.email, args.role)
    if args.users_command in ("disable", "enable"):
        return lambda c: _set_disabled(c, args.email, args.users_command == "disable")
    if args.users_command == "delete":
        return lambda c: _delete_user(c, args.email)
    return lambda c: _set_org(c, args.email, args.org)


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
    print_table(("id", "email", "role", "org"), rows)
    if more:
        print(f"(only the first {len(users)} users; raise --limit for more)", file=sys.stderr)


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
