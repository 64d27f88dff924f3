"""Who may do what: role ranks, organization scope and escalation rules
(docs/reference/accounts.md), and access to the actuator (docs/reference/operations.md). Whether
a user who proved who it is may log in, and what a federated identity becomes, are the login
rules of ``domain.login``.

Pure functions over domain values: no I/O, nothing but the standard library, attrs and
``domain``. The use cases in ``application`` (users, groups, operator) and the actuator's
authorizer (``entrypoints.actuator``) ask this package; they never decide access
themselves.

The acting party (``Actor``) is a ``Principal`` (an authenticated caller, over HTTP) or
``CLI_OPERATOR``, the box operator at the command line: trusted, it passes the role and scope
checks and no escalation rule binds it, but the last superadmin stays (``check_last_superadmin``).

The order of the checks is fixed (docs/reference/accounts.md) and the same everywhere:

1. **Role** (``require``): a role that may never perform an operation gets ``Forbidden`` (403)
   whatever the target, even a target that does not exist.
2. **Scope** (``require_in_scope``): viewer, operator and org_admin see and act only inside their
   own ``org_id``; anything outside gets ``NotFound`` (404), exactly as a missing resource does,
   so existence never leaks. superadmin acts across organizations.
3. **Rules of the operation**: escalation (``check_role_change``), the last superadmin
   (``check_last_superadmin``), a member's organization (``check_member_org``), an
   invitation's role and groups (``invitation_org``, ``check_invitation_groups``,
   ``check_invitation_change``), the organization of a webhook endpoint
   (``webhook_org``, ``check_webhook_access``), a client's
   audiences and scopes (``check_client_resources``), its first-party fields
   (``check_first_party_fields``).

Rules of sign-in through a code-flow client (OpenID Connect Core 1.0 §3.1.2.4): whom it admits
(``client_admits_user``) and when its consent page is skipped (``consent_skippable``).

Forward auth (``forward_auth_admits``): whom the first matching ``[[forward_auth.rules]]`` rule
lets through a reverse proxy.
The account pages' fresh-login rule (``login_is_recent``): adding a factor, changing the
password or the email and deleting the account need a recent login in the hosted session.

Actuator operations (``ActuatorOperation``) act on the service, not on an organization's
resources: only the role check applies (``can`` / ``require``).
"""

from __future__ import annotations

from domain.policy.access import (
    authorize,
    can,
    in_scope,
    list_scope,
    require,
    require_in_scope,
    target_org,
)
from domain.policy.accounts import (
    ASSIGNABLE_BY_ORG_ADMIN,
    check_keeps_a_superadmin,
    check_last_superadmin,
    check_member_org,
    check_role_change,
    check_user_management,
)
from domain.policy.actors import CLI_OPERATOR, OPERATOR_ACTOR_ID, Actor, CliOperator, Principal
from domain.policy.clients import (
    FIRST_PARTY_FIELDS,
    check_client_resources,
    check_first_party_fields,
    client_admits_user,
    consent_skippable,
    may_set_first_party_fields,
)
from domain.policy.forward_auth import forward_auth_admits
from domain.policy.freshness import login_is_recent
from domain.policy.invitations import (
    check_invitation_change,
    check_invitation_groups,
    invitation_org,
)
from domain.policy.operations import (
    ACTUATOR_REQUIRED_ROLE,
    REQUIRED_ROLE,
    ActuatorOperation,
    AnyOperation,
    Operation,
    required_role,
)
from domain.policy.scim import SCIM_ACTOR_PREFIX, SCIM_SCOPE, scim_principal
from domain.policy.webhooks import check_webhook_access, webhook_list_org, webhook_org

__all__ = [
    "ACTUATOR_REQUIRED_ROLE",
    "ASSIGNABLE_BY_ORG_ADMIN",
    "CLI_OPERATOR",
    "FIRST_PARTY_FIELDS",
    "OPERATOR_ACTOR_ID",
    "REQUIRED_ROLE",
    "SCIM_ACTOR_PREFIX",
    "SCIM_SCOPE",
    "Actor",
    "ActuatorOperation",
    "AnyOperation",
    "CliOperator",
    "Operation",
    "Principal",
    "authorize",
    "can",
    "check_client_resources",
    "check_first_party_fields",
    "check_invitation_change",
    "check_invitation_groups",
    "check_keeps_a_superadmin",
    "check_last_superadmin",
    "check_member_org",
    "check_role_change",
    "check_user_management",
    "check_webhook_access",
    "client_admits_user",
    "consent_skippable",
    "forward_auth_admits",
    "in_scope",
    "invitation_org",
    "list_scope",
    "login_is_recent",
    "may_set_first_party_fields",
    "require",
    "require_in_scope",
    "required_role",
    "scim_principal",
    "target_org",
    "webhook_list_org",
    "webhook_org",
]
