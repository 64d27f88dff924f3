"""The box operator's command line (docs/reference/accounts.md): ``authsvc create-superadmin`` and
``authsvc users set-role | set-org``.

The operator is ``domain.policy.CLI_OPERATOR``: trusted, it passes the role and scope checks, but
the last-superadmin rule binds it too. It names users by email; its events carry the actor id
``domain.policy.OPERATOR_ACTOR_ID`` (``"cli"``). ``set-role`` and ``set-org`` run the same use
cases as the HTTP routes (``SetRole``, ``UpdateUser``) through ``OperatorCommand``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

import attrs

from application.accounts.users import change_role
from application.events.audit import record
from application.events.catalog import UserRegistered
from application.ports import Clock, EmailNormalizer, EventBus, Hasher, Storage
from application.shared.checks import check_org_id, invalid
from application.shared.settings import AuthSettings, Live
from application.shared.steps import IdFactory, new_id, publish_all
from application.shared.users import ByEmail, UserRef, load_user, new_user
from domain.errors import NotFound
from domain.model import Role, User, check_password_policy
from domain.policy import CLI_OPERATOR, Actor

__all__ = ["CreateSuperadmin", "OperatorCommand", "SuperadminResult"]

V = TypeVar("V")


@attrs.frozen
class SuperadminResult:
    """The outcome of ``CreateSuperadmin``: the superadmin ``user``; ``created`` is True when the
    user was new, False when an existing user was promoted (or already superadmin)."""

    user: User
    created: bool


@attrs.frozen
class OperatorCommand(Generic[V]):
    """A use case on one user (``SetRole``, ``UpdateUser.move`` ...) as the operator's command
    runs it:
    ``await command(email, value)`` runs ``use_case(CLI_OPERATOR, ByEmail(email), value)``.

    ``email`` is normalized first by the injected ``EmailNormalizer`` (``ValidationFailed``
    naming ``email``). Raises what the use case raises (``NotFound`` for an unknown email);
    returns its ``User``.
    """

    _use_case: Callable[[Actor, UserRef, V], Awaitable[User]]
    _normalize_email: EmailNormalizer

    async def __call__(self, email: str, value: V) -> User:
        """Run the use case on the user ``email`` with ``value`` (a role, an organization)."""
        return await self._use_case(CLI_OPERATOR, ByEmail(self._normalize_email(email)), value)


@attrs.frozen
class CreateSuperadmin:
    """``authsvc create-superadmin --email E`` (docs/reference/accounts.md), run by the box
    operator.

    ``email`` is normalized by the injected ``EmailNormalizer`` (``ValidationFailed`` naming
    ``email``). An existing user is promoted to superadmin (its password and organization are
    kept; ``password`` is ignored) and ``RoleChanged`` (actor ``"cli"``) is published; an existing
    superadmin is left as it is. Otherwise a user is created with role superadmin in ``org_id``
    (default ``auth.default_org_id``): ``password`` is then required and must pass the password
    policy (``ValidationFailed`` naming ``password``), and ``UserRegistered`` is published.
    Hashing runs outside the unit of work. Returns ``SuperadminResult``.
    """

    _storage: Storage
    _bus: EventBus
    _hasher: Hasher
    _clock: Clock
    _settings: Live[AuthSettings]
    _normalize_email: EmailNormalizer
    _ids: IdFactory = new_id

    async def __call__(
        self, email: str, password: str | None, org_id: str | None = None
    ) -> SuperadminResult:
        """Create or promote the superadmin ``email``."""
        email = self._normalize_email(email)
        org = check_org_id(org_id) if org_id is not None else None
        with contextlib.suppress(NotFound):
            return await self._promote(email)  # an existing user
        settings = self._settings.current
        if password is None:
            raise invalid("password", "is required to create a user")
        check_password_policy(password, settings.password_min_length)
        user = await new_user(
            user_id=self._ids(),
            email=email,
            password=password,
            role=Role.SUPERADMIN,
            org_id=org or settings.default_org_id,
            hasher=self._hasher,
            clock=self._clock,
        )
        registered = UserRegistered(user.id, user.org_id)
        async with self._storage.begin() as uow:
            if await uow.users.get_by_email(email) is None:
                await uow.users.add(user)
                await record(uow, [registered], self._clock.now())
                await uow.commit()
                created = True
            else:
                created = False
        if not created:
            # Someone registered this email while the password was being hashed: promote it
            # (NotFound, should it have been deleted meanwhile).
            return await self._promote(email)
        await self._bus.publish(registered)
        return SuperadminResult(user, True)

    async def _promote(self, email: str) -> SuperadminResult:
        """Promote the existing user ``email``; raises ``NotFound`` when there is none."""
        async with self._storage.begin() as uow:
            existing = await load_user(uow, ByEmail(email))
            updated, events = await change_role(
                uow, existing, Role.SUPERADMIN, CLI_OPERATOR.actor_id
            )
            await record(uow, events, self._clock.now())
            await uow.commit()
        await publish_all(self._bus, events)
        return SuperadminResult(updated, False)
