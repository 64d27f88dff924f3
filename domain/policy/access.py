"""The first two checks of every decision (docs/reference/accounts.md): the role (``can``,
``require``: ``Forbidden``, 403) then the organization scope (``in_scope``, ``require_in_scope``:
``NotFound``, 404), together in ``authorize``; and the organization a listing runs with
(``list_scope``) or a new resource goes to (``target_org``).
"""

from __future__ import annotations

from domain.errors import FieldError, Forbidden, NotFound, ValidationFailed
from domain.policy.actors import Actor, CliOperator, Principal
from domain.policy.operations import AnyOperation, Operation, required_role

__all__ = [
    "authorize",
    "can",
    "in_scope",
    "list_scope",
    "require",
    "require_in_scope",
    "target_org",
]


def can(actor: Actor, operation: AnyOperation) -> bool:
    """True when ``actor`` may ever perform ``operation`` (the role check alone): a principal
    whose role ranks high enough, or the operator. For an ``ActuatorOperation`` this is the
    whole decision."""
    return isinstance(actor, CliOperator) or actor.role.rank >= required_role(operation).rank


def require(actor: Actor, operation: AnyOperation) -> None:
    """The role check of docs/reference/accounts.md, made first (and the only check of an
    ``ActuatorOperation``, docs/reference/operations.md).

    Raises ``Forbidden`` (403) when the role may never perform ``operation``, whatever the target.
    The operator always passes.
    """
    if isinstance(actor, Principal) and not can(actor, operation):
        raise Forbidden(f"role {actor.role.value} may not {operation.value.replace('_', ' ')}")


def in_scope(actor: Actor, target_org_id: str) -> bool:
    """True when ``target_org_id`` lies inside what ``actor`` may see (docs/reference/accounts.md):
    its own organization, or any organization for a superadmin and for the operator."""
    return isinstance(actor, CliOperator) or actor.is_superadmin or actor.org_id == target_org_id


def require_in_scope(actor: Actor, target_org_id: str, what: str = "resource") -> None:
    """The organization-scope check of docs/reference/accounts.md, made after ``require``.

    Raises ``NotFound`` (404) when the target lies outside ``actor``'s organization; the
    message is the one a missing resource gets (``"{what} not found"``), so existence never leaks.
    """
    if not in_scope(actor, target_org_id):
        raise NotFound(f"{what} not found")


def authorize(
    actor: Actor, operation: Operation, target_org_id: str, what: str = "resource"
) -> None:
    """``require`` then ``require_in_scope``: may ``actor`` perform ``operation`` on a
    resource of ``target_org_id``?

    Raises ``Forbidden`` (role never allowed) before ``NotFound`` (outside the organization),
    docs/reference/accounts.md.
    """
    require(actor, operation)
    require_in_scope(actor, target_org_id, what)


def list_scope(actor: Actor, operation: Operation, requested_org_id: str | None) -> str | None:
    """The organization filter a listing by ``actor`` runs with (docs/reference/accounts.md).

    ``operation`` is one of the ``LIST_*`` operations. A superadmin or
    the operator gets ``requested_org_id`` (None: every organization). Anyone else gets its own
    ``org_id``; asking for another organization is a permitted operation on another
    organization's resources, so it raises ``NotFound`` (404) — the same answer for an
    organization that exists and one that does not. Raises ``Forbidden`` first when the role
    may not list at all.
    """
    require(actor, operation)
    if isinstance(actor, CliOperator) or actor.is_superadmin:
        return requested_org_id
    if requested_org_id is not None:
        require_in_scope(actor, requested_org_id, "organization")
    return actor.org_id


def target_org(actor: Actor, operation: Operation, requested_org_id: str | None) -> str:
    """The organization a new resource (``CREATE_GROUP``, ``CREATE_CLIENT``) goes to (
    docs/reference/accounts.md).

    A superadmin may name any ``requested_org_id`` and defaults to its own; the command-line
    operator must name one (``ValidationFailed`` naming ``org_id`` otherwise). Anyone else gets
    its own organization; naming another raises ``NotFound`` (404). Raises ``Forbidden`` first
    when the role may not perform ``operation``.
    """
    require(actor, operation)
    if isinstance(actor, CliOperator):
        if requested_org_id is None:
            raise ValidationFailed([FieldError("org_id", "must be given on the command line")])
        return requested_org_id
    if requested_org_id is None:
        return actor.org_id
    require_in_scope(actor, requested_org_id, "organization")
    return requested_org_id
