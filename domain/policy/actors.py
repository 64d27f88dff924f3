"""Who acts (``Actor``): an authenticated ``Principal`` (over HTTP) or ``CLI_OPERATOR``, the box
operator at the command line, and the ``actor_id`` each gives the events it causes.
"""

from __future__ import annotations

from typing import TypeAlias

import attrs

from domain.model import Role, User

__all__ = ["CLI_OPERATOR", "OPERATOR_ACTOR_ID", "Actor", "CliOperator", "Principal"]


@attrs.frozen
class Principal:
    """The authenticated caller: ``user_id``, ``role`` and ``org_id``.

    Built by the driver (``entrypoints.http.caller``) from the caller's user record
    (``Principal.of``), so that a role change applies to the next request rather than to the
    next token.
    """

    user_id: str
    role: Role
    org_id: str

    @classmethod
    def of(cls, user: User) -> Principal:
        """The principal acting as ``user`` (its id, role and organization as stored now)."""
        return cls(user_id=user.id, role=user.role, org_id=user.org_id)

    @property
    def is_superadmin(self) -> bool:
        """True for a superadmin, who acts across organizations."""
        return self.role is Role.SUPERADMIN

    @property
    def actor_id(self) -> str:
        """The ``actor_id`` of the events this caller causes: its ``user_id``."""
        return self.user_id


OPERATOR_ACTOR_ID = "cli"
"""The ``actor_id`` of events caused by the box operator through the ``authsvc`` command line."""


@attrs.frozen
class CliOperator:
    """The box operator acting through the ``authsvc`` command line (``CLI_OPERATOR``).

    Trusted: it may perform every operation on every organization and no escalation rule binds it;
    the last-superadmin rule still does. It has no user record, role or organization.
    """

    @property
    def actor_id(self) -> str:
        """The ``actor_id`` of the events the operator causes: ``OPERATOR_ACTOR_ID``."""
        return OPERATOR_ACTOR_ID


CLI_OPERATOR = CliOperator()
"""The command-line operator."""

Actor: TypeAlias = Principal | CliOperator
"""Who acts: an authenticated ``Principal`` or the command-line ``CLI_OPERATOR``."""
