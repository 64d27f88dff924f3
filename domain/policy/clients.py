"""The rules of OAuth clients (docs/reference/oauth-and-oidc.md), checked after the role and the
scope: the audiences and scopes a client may carry (``check_client_resources``), who may make
it first-party (``check_first_party_fields``), and, when it signs users in by the code flow
(OpenID Connect Core 1.0 §3.1.2.4), whom it admits (``client_admits_user``) and when its
consent page is skipped (``consent_skippable``).
"""

from __future__ import annotations

from collections.abc import Mapping

from domain.clients import Client, Resource, check_resources_of_org
from domain.errors import Forbidden
from domain.model import User
from domain.policy.actors import Actor, CliOperator

__all__ = [
    "FIRST_PARTY_FIELDS",
    "check_client_resources",
    "check_first_party_fields",
    "client_admits_user",
    "consent_skippable",
    "may_set_first_party_fields",
]


def check_client_resources(
    actor: Actor,
    org_id: str,
    audience: tuple[str, ...],
    scopes: tuple[str, ...],
    resources: tuple[Resource, ...],
    shared_audience: str,
    shared_scopes: tuple[str, ...] = (),
) -> None:
    """May ``actor`` give a client of ``org_id`` these ``audience`` and ``scopes``? (tenants'
    audiences, docs/adr/0026 and docs/adr/0036). Call it after the role and scope checks.

    A superadmin and the command-line operator may name any audience and scope. Anyone else
    (an org_admin) only ``shared_audience`` (``auth.audience``, then with ``shared_scopes``,
    ``oauth.shared_scopes``, alone) and the ``resources`` (``oauth.resources``) of ``org_id``
    or shared by every organization, with scopes among theirs
    (``domain.clients.check_resources_of_org``), so it can never mint tokens for another
    tenant's API, nor tokens of the shared audience with scopes of its choosing. Raises
    ``ValidationFailed`` (422) naming ``audience`` or ``scopes``.
    """
    if isinstance(actor, CliOperator) or actor.is_superadmin:
        return
    check_resources_of_org(org_id, audience, scopes, resources, shared_audience, shared_scopes)


FIRST_PARTY_FIELDS = ("skip_consent", "all_organizations")
"""The client fields only a superadmin or the command line may set: they make a client trusted
beyond its organization's own say (no consent page; users of every organization)."""


def may_set_first_party_fields(actor: Actor) -> bool:
    """Whether ``actor`` may set ``FIRST_PARTY_FIELDS``: a superadmin or the operator."""
    return isinstance(actor, CliOperator) or actor.is_superadmin


def check_first_party_fields(actor: Actor, fields: Mapping[str, object]) -> None:
    """A registration or change by ``actor`` carrying any of ``FIRST_PARTY_FIELDS`` (a key of
    ``fields`` whose value is not None, true or false alike) is refused unless the actor is a
    superadmin or the operator: ``Forbidden`` (403). An org_admin's app is not first-party for
    the other tenants (RFC 9700 §4.15; OpenID Connect Core 1.0 §3.1.2.4). Call it right after
    the role check (``require``), before the target's organization and the values are checked.
    """
    carried = [f for f in FIRST_PARTY_FIELDS if fields.get(f) is not None]
    if carried and not may_set_first_party_fields(actor):
        raise Forbidden(f"only a superadmin or the command line may set {', '.join(carried)}")


def client_admits_user(client: Client, user: User) -> bool:
    """Whether the code-flow ``client`` may sign ``user`` in (issue a code for it): a user of
    the client's own organization, or anyone when the client has ``all_organizations``. A
    tenant's app never learns who the other tenants' users are, superadmins included (OpenID
    Connect Core 1.0 §3.1.2.4; the refusal is ``access_denied``, RFC 6749 §4.1.2.1)."""
    return client.all_organizations or user.org_id == client.org_id


def consent_skippable(client: Client, user: User) -> bool:
    """Whether ``client``'s ``skip_consent`` spares ``user`` the consent page: only for users of
    the client's own organization, for whom it is first-party; everyone else is asked
    (OpenID Connect Core 1.0 §3.1.2.4)."""
    return client.skip_consent and user.org_id == client.org_id
