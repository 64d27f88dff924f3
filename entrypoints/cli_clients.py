"""``authsvc clients create | list | rotate-secret | disable | enable | trust | delete``: the
OAuth client registry from the command line (docs/reference/oauth-and-oidc.md), run as the box
operator (``CLI_OPERATOR``: every organization; audit rows name the actor ``cli``)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from application.shared.pagination import MAX_PAGE_LIMIT
from domain.clients import Client
from domain.policy import CLI_OPERATOR
from entrypoints.cli_common import Command

if TYPE_CHECKING:
    from entrypoints.container import Container


def add_client_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``clients`` and its sub-commands on the top-level parser's ``sub``."""
    clients = sub.add_parser("clients", help="register, list, rotate, disable or delete OAuth "
                                             "clients")  # fmt: skip
    clients_sub = clients.add_subparsers(dest="clients_command", required=True)
    create = clients_sub.add_parser("create", help="register a client; prints its secret once")
    create.add_argument("name", metavar="NAME")
    create.add_argument("--scope", action="append", default=[], metavar="SCOPE",
                        help="a scope the client may ask for (repeat for more)")  # fmt: skip
    create.add_argument(
        "--audience",
        action="append",
        default=None,
        metavar="AUD",
        help="an audience of its tokens (repeat; default auth.audience)",
    )
    create.add_argument("--org", default=None, help="its organization (default: "
                                                    "auth.default_org_id)")  # fmt: skip
    create.add_argument("--require-dpop", action="store_true", help="tokens only with DPoP")
    create.add_argument("--grant-type", action="append", default=None, metavar="GRANT",
                        dest="grant_types", help="client_credentials, authorization_code, "
                        "refresh_token or urn:ietf:params:oauth:grant-type:device_code (repeat; "
                        "default client_credentials)")  # fmt: skip
    for flag, dest, text in (
        ("--redirect-uri", "redirect_uris", "a redirect URI of the code flow (repeat)"),
        ("--post-logout-redirect-uri", "post_logout_redirect_uris",
         "where RP-initiated logout may return (repeat)"),
    ):  # fmt: skip
        create.add_argument(flag, action="append", default=None, dest=dest, help=text)
    create.add_argument("--public", action="store_true",
                        help="a public client (no secret; auth method none)")  # fmt: skip
    create.add_argument("--token-endpoint-auth-method", default=None,
                        choices=("client_secret_basic", "client_secret_post", "none",
                                 "private_key_jwt"))  # fmt: skip
    # RFC 9126 and RFC 7523 (docs/reference/oauth-and-oidc.md)
    create.add_argument("--require-pushed-authorization-requests", action="store_true",
                        help="authorization requests only through /oauth/par")  # fmt: skip
    create.add_argument("--jwks", default=None, metavar="JSON",
                        help="the JWK Set (public keys) of private_key_jwt")  # fmt: skip
    create.add_argument("--jwks-uri", default=None, help="where its JWK Set is served (https)")
    create.add_argument("--skip-consent", action="store_true",
                        help="a first-party app: no consent page for users of its "
                        "organization")  # fmt: skip
    create.add_argument("--all-organizations", action="store_true",
                        help="sign in users of every organization, not only of its "
                        "own")  # fmt: skip
    for flag in ("--logo-uri", "--policy-uri", "--tos-uri", "--id-token-signed-response-alg",
                 "--access-token-signed-response-alg"):  # fmt: skip
        create.add_argument(flag, default=None)
    create.add_argument("--backchannel-logout-uri", default=None,
                        help="where logout tokens are POSTed (OpenID Connect Back-Channel "
                        "Logout 1.0)")  # fmt: skip
    create.add_argument("--backchannel-logout-session-required", action="store_true",
                        help="the client needs sid in its logout tokens")  # fmt: skip
    listing = clients_sub.add_parser("list", help="one line per client")
    listing.add_argument("--org", default=None, help="only this organization")
    for name, text in (
        ("rotate-secret", "give the client a new secret; prints it once"),
        ("disable", "disable the client (its tokens become inactive)"),
        ("enable", "enable the client again"),
        ("delete", "delete the client (its tokens become inactive)"),
    ):
        clients_sub.add_parser(name, help=text).add_argument("client_id", metavar="CLIENT_ID")
    trust = clients_sub.add_parser(
        "trust", help="set or clear a client's skip_consent and all_organizations (docs/adr/0036)"
    )
    trust.add_argument("client_id", metavar="CLIENT_ID")
    trust.add_argument("--skip-consent", action=argparse.BooleanOptionalAction, default=None,
                       help="no consent page for users of its organization")  # fmt: skip
    trust.add_argument("--all-organizations", action=argparse.BooleanOptionalAction,
                       default=None, help="sign in users of every organization")  # fmt: skip


def client_command(args: argparse.Namespace) -> Command:
    """The coroutine function running the ``clients`` sub-command named by ``args``."""
    command = args.clients_command
    if command == "create":
        return lambda c: _create(c, args)
    if command == "list":
        return lambda c: _list(c, args.org)
    if command == "rotate-secret":
        return lambda c: _rotate(c, args.client_id)
    if command == "delete":
        return lambda c: _delete(c, args.client_id)
    if command == "trust":
        return lambda c: _trust(c, args)
    return lambda c: _set_disabled(c, args.client_id, command == "disable")


def _line(client: Client) -> str:
    state = "disabled" if client.disabled else "enabled"
    return f"{client.id}  {client.org_id}  {client.name}  {' '.join(client.scopes)}  {state}"


async def _create(container: Container, args: argparse.Namespace) -> None:
    org = args.org or container.auth_settings().current.default_org_id
    made = await container.create_client()(
        CLI_OPERATOR, args.name, args.scope, audience=args.audience, org_id=org,
        require_dpop=args.require_dpop,
        access_token_signed_response_alg=args.access_token_signed_response_alg,
        public=args.public, grant_types=args.grant_types, redirect_uris=args.redirect_uris,
        post_logout_redirect_uris=args.post_logout_redirect_uris,
        token_endpoint_auth_method=args.token_endpoint_auth_method,
        skip_consent=args.skip_consent or None,
        all_organizations=args.all_organizations or None, logo_uri=args.logo_uri,
        policy_uri=args.policy_uri, tos_uri=args.tos_uri,
        id_token_signed_response_alg=args.id_token_signed_response_alg,
        require_pushed_authorization_requests=args.require_pushed_authorization_requests or None,
        jwks=args.jwks, jwks_uri=args.jwks_uri,
        backchannel_logout_uri=args.backchannel_logout_uri,
        backchannel_logout_session_required=args.backchannel_logout_session_required or None,
    )  # fmt: skip
    print(f"client_id: {made.client.id}")
    if made.client_secret is None:
        print("(a public client: no secret)", file=sys.stderr)
        return
    print(f"client_secret: {made.client_secret}")
    print("(the secret is shown this once; only its hash is kept)", file=sys.stderr)


async def _list(container: Container, org: str | None) -> None:
    cursor: str | None = None
    while True:
        page = await container.list_clients()(
            CLI_OPERATOR, limit=MAX_PAGE_LIMIT, cursor=cursor, org_id=org
        )
        for client in page.items:
            print(_line(client))
        cursor = page.next_cursor
        if cursor is None:
            return


async def _rotate(container: Container, client_id: str) -> None:
    print(f"client_secret: {await container.rotate_client_secret()(CLI_OPERATOR, client_id)}")


async def _set_disabled(container: Container, client_id: str, disabled: bool) -> None:
    print(_line(await container.update_client()(CLI_OPERATOR, client_id, disabled=disabled)))


async def _trust(container: Container, args: argparse.Namespace) -> None:
    """``clients trust``: the first-party fields given (at least one; ``UpdateClient`` says
    which are needed otherwise), then the client's line and both values."""
    client = await container.update_client()(
        CLI_OPERATOR, args.client_id, skip_consent=args.skip_consent,
        all_organizations=args.all_organizations,
    )  # fmt: skip
    print(f"{_line(client)}  skip_consent={str(client.skip_consent).lower()}"
          f"  all_organizations={str(client.all_organizations).lower()}")  # fmt: skip


async def _delete(container: Container, client_id: str) -> None:
    await container.delete_client()(CLI_OPERATOR, client_id)
    print(f"deleted {client_id}")
