"""Who may provision over SCIM 2.0 (RFC 7644; docs/reference/scim.md, docs/adr/0050): an OAuth
client of the client credentials grant whose access token carries the ``scim`` scope, acting
inside its own organization with the rights of an org_admin there, under the name
``scim:<client_id>``.
"""

from __future__ import annotations

from collections.abc import Iterable

from domain.clients import Client
from domain.errors import Forbidden, InvalidToken
from domain.model import Role
from domain.policy.actors import Principal

__all__ = ["SCIM_ACTOR_PREFIX", "SCIM_SCOPE", "scim_principal"]

SCIM_SCOPE = "scim"
"""The scope a client credentials token needs at ``/scim/v2`` (docs/adr/0050)."""

SCIM_ACTOR_PREFIX = "scim:"
"""The ``actor_id`` of what a SCIM client changes is this prefix and its ``client_id``: audit
rows name the provisioning client (docs/reference/scim.md)."""


def scim_principal(client: Client | None, token_scopes: Iterable[str]) -> Principal:
    """The principal a SCIM request acts as, given the token's ``client`` as stored now and the
    scopes of its access token.

    Raises ``InvalidToken`` (401) when the client is gone or disabled, or acts for every
    organization (a first-party sign-in client has no one organization to provision), and
    ``Forbidden`` (403, RFC 6750 ``insufficient_scope``) when the token or the client no longer
    holds ``SCIM_SCOPE`` (removing the scope from a client cuts its live tokens at once).

    The principal is an org_admin of ``client.org_id``: it sees and changes that organization's
    users and groups alone (another organization's resource is 404), may never touch a
    superadmin nor grant any role (docs/reference/accounts.md escalation rules).
    """
    if client is None or client.disabled or client.all_organizations:
        raise InvalidToken("the token's client no longer exists or is disabled")
    if SCIM_SCOPE not in set(token_scopes) or SCIM_SCOPE not in client.scopes:
        raise Forbidden(f"the access token needs the {SCIM_SCOPE} scope")
    return Principal(
        user_id=SCIM_ACTOR_PREFIX + client.id, role=Role.ORG_ADMIN, org_id=client.org_id
    )
