"""The users a SCIM client provisions (RFC 7643 §4.1, RFC 7644 §3; docs/reference/scim.md).

A provisioned user is a user of the client's organization like any other: role ``viewer``, its
``userName`` is its email. It has no password and its email is not taken as verified (the
identity provider's word is not proof of the mailbox, and a verified email would let the
federation's email linking attach someone's provider identity to an account of this
organization, docs/reference/federation.md): it signs in with a provider once it proves the
email, or sets a password through the reset link. Disabling (``active: false``) and deleting go
through the lifecycle use cases of ``application.accounts.lifecycle`` unchanged (sessions end,
the last superadmin stays, audit rows with the SCIM client as actor).
"""

from __future__ import annotations

import attrs

from application.accounts.lifecycle import UpdateUser
from application.events.audit import record
from application.events.catalog import Event, UserDisabled
from application.events.scim import UserProvisioned
from application.ports import Clock, EmailNormalizer, EventBus, Storage
from application.shared.steps import IdFactory, new_id, publish_all
from application.shared.users import user_in_scope
from domain import policy
from domain.errors import EmailTaken, FieldError, ValidationFailed
from domain.model import Role, User
from domain.policy import Operation, Principal

__all__ = ["USER_NAME_IMMUTABLE", "ListScimUsers", "ProvisionUser", "UpdateScimUser"]

_PAGE = 200

USER_NAME_IMMUTABLE = "cannot be changed: it is the user's email"
"""The reason ``UpdateScimUser`` gives for a new ``userName`` (SCIM ``mutability``)."""


def _user_name(normalize: EmailNormalizer, user_name: str) -> str:
    try:
        return normalize(user_name)
    except ValidationFailed:
        raise ValidationFailed([FieldError("userName", "must be an email address")]) from None


@attrs.frozen
class ProvisionUser:
    """POST /scim/v2/Users (RFC 7644 §3.3): ``await provision(principal, user_name, active)``.

    Rules: below org_admin → ``Forbidden``; an ``org_id`` of another organization than an
    org_admin's → ``NotFound``; ``user_name`` not an email → ``ValidationFailed``
    naming ``userName``; an email some user already has (in any organization: emails are unique
    across the service) → ``EmailTaken``. Creates a ``viewer`` of the principal's organization
    with no password and ``email_verified`` false, disabled when ``active`` is false; records
    ``UserProvisioned`` (and ``UserDisabled``) with it. Returns the new ``User``.
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock
    _normalize_email: EmailNormalizer
    _ids: IdFactory = new_id

    async def __call__(
        self,
        principal: Principal,
        user_name: str,
        active: bool = True,
        org_id: str | None = None,
    ) -> User:
        """Create the user ``user_name`` (in ``org_id``: a superadmin only; None: the
        principal's own organization, as always over SCIM)."""
        org = policy.target_org(principal, Operation.PROVISION_USER, org_id)
        email = _user_name(self._normalize_email, user_name)
        now = self._clock.now()
        user = User(
            id=self._ids(), email=email, password_hash="", role=Role.VIEWER, org_id=org,
            created_at=now, disabled=not active,
        )  # fmt: skip
        events: list[Event] = [UserProvisioned(user.id, org, principal.actor_id)]
        if not active:
            events.append(UserDisabled(user.id, principal.actor_id))
        async with self._storage.begin() as uow:
            if await uow.users.get_by_email(email) is not None:
                raise EmailTaken("a user with this userName already exists")
            await uow.users.add(user)  # raises EmailTaken on a concurrent duplicate
            await record(uow, events, now)
            await uow.commit()
        await publish_all(self._bus, events)
        return user


@attrs.frozen
class ListScimUsers:
    """``await listing(principal)`` → every user of the principal's organization, ordered by
    id (RFC 7644 §3.4.2: the SCIM driver filters and pages them). ``Forbidden`` below
    org_admin."""

    _storage: Storage

    async def __call__(self, principal: Principal) -> list[User]:
        """The organization's users."""
        org = policy.list_scope(principal, Operation.LIST_USERS, None)
        found: list[User] = []
        after: str | None = None
        async with self._storage.read() as uow:
            while True:
                page = await uow.users.list_page(org, after, _PAGE)
                found += page
                if len(page) < _PAGE:
                    return found
                after = page[-1].id


@attrs.frozen
class UpdateScimUser:
    """PUT and PATCH /scim/v2/Users/{id} (RFC 7644 §3.5): ``await update(principal, user_id,
    user_name=..., active=...)``.

    Rules: the user missing or of another organization → ``NotFound``; a ``user_name`` that is
    not the user's email (after normalization) → ``ValidationFailed`` naming ``userName``
    (``USER_NAME_IMMUTABLE``); ``active`` goes to ``UpdateUser`` as ``disabled = not active``
    (its rules: not a superadmin, not the last one; disabling ends every session). Returns the
    ``User`` as stored after the change.
    """

    _storage: Storage
    _normalize_email: EmailNormalizer
    _update: UpdateUser

    async def __call__(
        self,
        principal: Principal,
        user_id: str,
        *,
        user_name: str | None = None,
        active: bool | None = None,
    ) -> User:
        """Apply the change to ``user_id``."""
        policy.require(principal, Operation.VIEW_USER)
        async with self._storage.read() as uow:
            user = await user_in_scope(uow, principal, user_id)
        if user_name is not None and _user_name(self._normalize_email, user_name) != user.email:
            raise ValidationFailed([FieldError("userName", USER_NAME_IMMUTABLE)])
        if active is None:
            return user
        return await self._update(principal, user.id, disabled=not active)
