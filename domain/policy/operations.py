"""What the policy rules on: the operations on an organization's resources (``Operation``), the
actuator's (``ActuatorOperation``), and the lowest role allowed each (``REQUIRED_ROLE``,
``ACTUATOR_REQUIRED_ROLE``, ``required_role``), docs/reference/accounts.md "Who" and
docs/reference/operations.md.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType
from typing import TypeAlias

from domain.model import Role

__all__ = [
    "ACTUATOR_REQUIRED_ROLE",
    "REQUIRED_ROLE",
    "ActuatorOperation",
    "AnyOperation",
    "Operation",
    "required_role",
]


class Operation(enum.Enum):
    """The operations of docs/reference/accounts.md that the policy rules on.

    ``LIST_USERS`` GET /users, ``VIEW_USER`` GET /users/{id}, ``SET_ROLE`` PUT /users/{id}/role,
    ``MOVE_USER`` PATCH /users/{id} ``{"org_id"}``, ``DISABLE_USER`` PATCH /users/{id}
    ``{"disabled"}``, ``DELETE_USER`` DELETE /users/{id}, ``LIST_USER_SESSIONS`` GET
    /users/{id}/sessions, ``END_USER_SESSIONS`` DELETE /users/{id}/sessions, ``RESET_USER_MFA``
    DELETE /users/{id}/mfa (docs/reference/mfa-and-passkeys.md), ``LIST_GROUPS``
    GET /groups, ``VIEW_GROUP`` GET /groups/{id},
    ``CREATE_GROUP`` POST /groups, ``RENAME_GROUP`` PATCH /groups/{id}, ``DELETE_GROUP``
    DELETE /groups/{id}, ``ADD_MEMBER`` PUT /groups/{id}/members/{user_id}, ``REMOVE_MEMBER``
    DELETE /groups/{id}/members/{user_id}, ``LIST_AUDIT_EVENTS`` GET /audit-events (
    docs/reference/operations.md); OAuth clients (docs/reference/oauth-and-oidc.md):
    ``LIST_CLIENTS`` GET /oauth/clients, ``VIEW_CLIENT`` GET /oauth/clients/{id}, ``CREATE_CLIENT``
    POST /oauth/clients, ``UPDATE_CLIENT`` PATCH, ``DELETE_CLIENT`` DELETE /oauth/clients/{id},
    ``ROTATE_CLIENT_SECRET`` POST /oauth/clients/{id}/secret; passkeys
    (docs/reference/mfa-and-passkeys.md): ``LIST_USER_PASSKEYS`` GET /users/{id}/passkeys,
    ``DELETE_USER_PASSKEY`` DELETE /users/{id}/passkeys/{pid}; the admin console
    (docs/reference/console.md): ``USE_ADMIN_CONSOLE`` any page of /ui/admin, ``VIEW_DASHBOARD`` its
    dashboard's counts, ``VIEW_SIGNING_KEYS`` the dashboard's signing keys and their algorithms,
    ``VIEW_IDENTITY_PROVIDERS`` its list of the configured identity providers and their
    readiness (docs/reference/federation.md); ``SEND_PASSWORD_RESET`` POST
    /users/{id}/password-reset (docs/reference/accounts.md: a reset link mailed to the user);
    invitations (docs/reference/invitations.md): ``CREATE_INVITATION`` POST /invitations,
    ``LIST_INVITATIONS`` GET /invitations, ``RESEND_INVITATION`` POST /invitations/{id}/resend,
    ``REVOKE_INVITATION`` DELETE /invitations/{id}; ``PROVISION_USER`` POST /scim/v2/Users, a
    user created in the caller's organization without a password (docs/reference/scim.md),
    ``UPDATE_PROVISIONED_USER`` PUT/PATCH /scim/v2/Users/{id}, a change of a user's email
    (``userName``) or of its SCIM attributes;
    webhooks (docs/reference/webhooks.md): ``CREATE_WEBHOOK`` POST /webhooks, ``LIST_WEBHOOKS``
    GET /webhooks, ``VIEW_WEBHOOK`` GET /webhooks/{id} and its deliveries, ``UPDATE_WEBHOOK``
    PATCH, ``DELETE_WEBHOOK`` DELETE, ``ROTATE_WEBHOOK_SECRET`` POST /webhooks/{id}/secret,
    ``TEST_WEBHOOK`` POST /webhooks/{id}/test.
    """

    LIST_USERS = "list_users"
    VIEW_USER = "view_user"
    SET_ROLE = "set_role"
    MOVE_USER = "move_user"
    DISABLE_USER = "disable_user"
    DELETE_USER = "delete_user"
    LIST_USER_SESSIONS = "list_user_sessions"
    END_USER_SESSIONS = "end_user_sessions"
    RESET_USER_MFA = "reset_user_mfa"
    LIST_GROUPS = "list_groups"
    VIEW_GROUP = "view_group"
    CREATE_GROUP = "create_group"
    RENAME_GROUP = "rename_group"
    DELETE_GROUP = "delete_group"
    ADD_MEMBER = "add_member"
    REMOVE_MEMBER = "remove_member"
    LIST_AUDIT_EVENTS = "list_audit_events"
    LIST_CLIENTS = "list_clients"
    VIEW_CLIENT = "view_client"
    CREATE_CLIENT = "create_client"
    UPDATE_CLIENT = "update_client"
    DELETE_CLIENT = "delete_client"
    ROTATE_CLIENT_SECRET = "rotate_client_secret"  # noqa: S105 - an operation name
    LIST_USER_PASSKEYS = "list_user_passkeys"
    DELETE_USER_PASSKEY = "delete_user_passkey"
    USE_ADMIN_CONSOLE = "use_admin_console"
    VIEW_DASHBOARD = "view_dashboard"
    VIEW_SIGNING_KEYS = "view_signing_keys"
    VIEW_IDENTITY_PROVIDERS = "view_identity_providers"
    SEND_PASSWORD_RESET = "send_password_reset"  # noqa: S105 - an operation name
    CREATE_INVITATION = "create_invitation"
    LIST_INVITATIONS = "list_invitations"
    RESEND_INVITATION = "resend_invitation"
    REVOKE_INVITATION = "revoke_invitation"
    PROVISION_USER = "provision_user"
    UPDATE_PROVISIONED_USER = "update_provisioned_user"
    CREATE_WEBHOOK = "create_webhook"
    LIST_WEBHOOKS = "list_webhooks"
    VIEW_WEBHOOK = "view_webhook"
    UPDATE_WEBHOOK = "update_webhook"
    DELETE_WEBHOOK = "delete_webhook"
    ROTATE_WEBHOOK_SECRET = "rotate_webhook_secret"  # noqa: S105 - an operation name
    TEST_WEBHOOK = "test_webhook"


REQUIRED_ROLE: Mapping[Operation, Role] = MappingProxyType(
    {
        Operation.LIST_USERS: Role.ORG_ADMIN,
        Operation.VIEW_USER: Role.ORG_ADMIN,
        Operation.SET_ROLE: Role.ORG_ADMIN,
        Operation.MOVE_USER: Role.SUPERADMIN,
        Operation.DISABLE_USER: Role.ORG_ADMIN,
        Operation.DELETE_USER: Role.ORG_ADMIN,
        Operation.LIST_USER_SESSIONS: Role.ORG_ADMIN,
        Operation.END_USER_SESSIONS: Role.ORG_ADMIN,
        Operation.RESET_USER_MFA: Role.ORG_ADMIN,
        Operation.LIST_GROUPS: Role.VIEWER,
        Operation.VIEW_GROUP: Role.VIEWER,
        Operation.CREATE_GROUP: Role.ORG_ADMIN,
        Operation.RENAME_GROUP: Role.ORG_ADMIN,
        Operation.DELETE_GROUP: Role.ORG_ADMIN,
        Operation.ADD_MEMBER: Role.ORG_ADMIN,
        Operation.REMOVE_MEMBER: Role.ORG_ADMIN,
        Operation.LIST_AUDIT_EVENTS: Role.ORG_ADMIN,
        Operation.LIST_CLIENTS: Role.ORG_ADMIN,
        Operation.VIEW_CLIENT: Role.ORG_ADMIN,
        Operation.CREATE_CLIENT: Role.ORG_ADMIN,
        Operation.UPDATE_CLIENT: Role.ORG_ADMIN,
        Operation.DELETE_CLIENT: Role.ORG_ADMIN,
        Operation.ROTATE_CLIENT_SECRET: Role.ORG_ADMIN,
        Operation.LIST_USER_PASSKEYS: Role.ORG_ADMIN,
        Operation.DELETE_USER_PASSKEY: Role.ORG_ADMIN,
        Operation.USE_ADMIN_CONSOLE: Role.ORG_ADMIN,
        Operation.VIEW_DASHBOARD: Role.ORG_ADMIN,
        Operation.VIEW_SIGNING_KEYS: Role.SUPERADMIN,
        Operation.VIEW_IDENTITY_PROVIDERS: Role.ORG_ADMIN,
        Operation.SEND_PASSWORD_RESET: Role.ORG_ADMIN,
        Operation.CREATE_INVITATION: Role.ORG_ADMIN,
        Operation.LIST_INVITATIONS: Role.ORG_ADMIN,
        Operation.RESEND_INVITATION: Role.ORG_ADMIN,
        Operation.REVOKE_INVITATION: Role.ORG_ADMIN,
        Operation.PROVISION_USER: Role.ORG_ADMIN,
        Operation.UPDATE_PROVISIONED_USER: Role.ORG_ADMIN,
        Operation.CREATE_WEBHOOK: Role.ORG_ADMIN,
        Operation.LIST_WEBHOOKS: Role.ORG_ADMIN,
        Operation.VIEW_WEBHOOK: Role.ORG_ADMIN,
        Operation.UPDATE_WEBHOOK: Role.ORG_ADMIN,
        Operation.DELETE_WEBHOOK: Role.ORG_ADMIN,
        Operation.ROTATE_WEBHOOK_SECRET: Role.ORG_ADMIN,
        Operation.TEST_WEBHOOK: Role.ORG_ADMIN,
    }
)
"""The lowest role allowed each operation (docs/reference/accounts.md "Who").

Roles are ranked (``Role.rank``): a role may perform an operation when its rank is at least the
required role's rank.
"""


class ActuatorOperation(enum.Enum):
    """The actuator's protected operations (docs/reference/operations.md), ruled on by role alone.

    ``SEE_HEALTH_DETAILS`` components and details of GET /actuator/health (and /health/ready)
    under ``actuator.show_details = "when_authorized"``; ``READ_METRICS`` GET /actuator/metrics
    when ``actuator.metrics_require_auth``; ``REFRESH_CONFIGURATION`` POST /actuator/refresh.
    """

    SEE_HEALTH_DETAILS = "see_health_details"
    READ_METRICS = "read_metrics"
    REFRESH_CONFIGURATION = "refresh_configuration"


ACTUATOR_REQUIRED_ROLE: Mapping[ActuatorOperation, Role] = MappingProxyType(
    {
        ActuatorOperation.SEE_HEALTH_DETAILS: Role.ORG_ADMIN,
        ActuatorOperation.READ_METRICS: Role.VIEWER,
        ActuatorOperation.REFRESH_CONFIGURATION: Role.SUPERADMIN,
    }
)
"""The lowest role allowed each actuator operation (docs/reference/operations.md: details for
org_admin and superadmin, refresh for superadmin, metrics — when protected — for any authenticated
user).
"""


AnyOperation: TypeAlias = Operation | ActuatorOperation
"""An operation the policy rules on: on an organization's resources, or on the actuator."""


def required_role(operation: AnyOperation) -> Role:
    """The lowest role allowed ``operation`` (``REQUIRED_ROLE`` or ``ACTUATOR_REQUIRED_ROLE``)."""
    if isinstance(operation, ActuatorOperation):
        return ACTUATOR_REQUIRED_ROLE[operation]
    return REQUIRED_ROLE[operation]
