"""Who may manage which webhook endpoints (docs/reference/webhooks.md), checked like every
decision: the role (``Forbidden``: below org_admin), then the organization scope (``NotFound``:
an org_admin and another organization's endpoint). A superadmin manages any organization's.
"""

from __future__ import annotations

from domain.policy.access import authorize, list_scope, target_org
from domain.policy.actors import Actor
from domain.policy.operations import Operation
from domain.webhooks import Webhook

__all__ = ["check_webhook_access", "webhook_list_org", "webhook_org"]


def webhook_org(actor: Actor, requested_org_id: str | None) -> str:
    """The organization a new endpoint by ``actor`` belongs to (POST /webhooks): ``Forbidden``
    below org_admin; an org_admin gets its own and ``NotFound`` for naming another; a superadmin
    any it names (default: its own)."""
    return target_org(actor, Operation.CREATE_WEBHOOK, requested_org_id)


def webhook_list_org(actor: Actor, requested_org_id: str | None) -> str | None:
    """The organization filter of GET /webhooks (None: every organization, superadmin only);
    ``Forbidden`` below org_admin, ``NotFound`` for an org_admin naming another organization."""
    return list_scope(actor, Operation.LIST_WEBHOOKS, requested_org_id)


def check_webhook_access(actor: Actor, webhook: Webhook, operation: Operation) -> None:
    """May ``actor`` perform ``operation`` (``VIEW_WEBHOOK``, ``UPDATE_WEBHOOK``,
    ``DELETE_WEBHOOK``, ``ROTATE_WEBHOOK_SECRET``, ``TEST_WEBHOOK``) on ``webhook``?
    ``Forbidden`` below org_admin, then ``NotFound`` ("webhook not found", as for a missing
    one) outside an org_admin's organization."""
    authorize(actor, operation, webhook.org_id, "webhook")
