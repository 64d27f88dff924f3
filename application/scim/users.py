"""The users a SCIM client provisions (RFC 7643 §4.1, RFC 7644 §3; docs/reference/scim.md).

A provisioned user is a user of the client's organization like any other: role ``viewer``, its
``userName`` is its email. It has no password and its email is not taken as verified (the
identity provider's word is not proof of the mailbox, and a verified email would let the
federation's email linking attach someone's provider identity to an account of this
organization, docs/reference/federation.md): it signs in with a provider once it proves the
email, or sets a password through the reset link. Disabling (``active: false``) and deleting go
through the lifecycle use cases of ``application.accounts.lifecycle`` unchanged (sessions end,
the last superadmin stays, audit rows with the SCIM client as actor). A new ``userName`` is a new
email, again unverified. What the client sent beyond that (``externalId``, the kept attributes)
is the user's ``ScimRecord`` (ADR 0054).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from application.accounts.lifecycle import UpdateUser
from application.events.audit import record as write_audit
from application.events.catalog import Event, UserDisabled
from application.events.scim import ProvisionedEmailChanged, UserProvisioned
from application.ports import Clock, EmailNormalizer, EventBus, Storage
from application.shared.steps import IdFactory, new_id, publish_all
from application.shared.users import user_in_scope
from domain import policy
from domain.errors import EmailTaken, FieldError, ValidationFailed
from domain.model import EmailTokenPurpose, Role, User
from domain.policy import Operation, Principal
from domain.scim import ScimRecord

__all__ = ["GetScimUser", "ListScimUsers", "ProvisionUser", "ScimUser", "UpdateScimUser"]

_PAGE = 200


def _user_name(normalize: EmailNormalizer, user_name: str) -> str:
    try:
        return normalize(user_name)
    except ValidationFailed:
        raise ValidationFailed([FieldError("userName", "must be an email address")]) from None


@attrs.frozen
class ScimUser:
    """A user as SCIM sees it: the account and its ``ScimRecord`` (None: never provisioned or
    changed over SCIM, e.g. a user who signed up)."""

    user: User
    record: ScimRecord | None


@attrs.frozen
class ProvisionUser:
    """POST /scim/v2/Users (RFC 7644 §3.3): ``await provision(principal, user_name, active,
    external_id=..., attributes=...)``.

    Rules: below org_admin → ``Forbidden``; an ``org_id`` of another organization than an
    org_admin's → ``NotFound``; ``user_name`` not an email → ``ValidationFailed``
    naming ``userName``; an email some user already has (in any organization: emails are unique
    across the service) → ``EmailTaken``. Creates a ``viewer`` of the principal's organization
    with no password and ``email_verified`` false, disabled when ``active`` is false, and its
    ``ScimRecord`` (``external_id``, ``attributes``: the kept SCIM attributes as a JSON object);
    records ``UserProvisioned`` (and ``UserDisabled``) with it, all in one unit of work.
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
        *,
        external_id: str | None = None,
        attributes: Mapping[str, Any] | None = None,
    ) -> ScimUser:
        """Create the user ``user_name`` (in ``org_id``: a superadmin only; None: the
        principal's own organization, as always over SCIM)."""
        org = policy.target_org(principal, Operation.PROVISION_USER, org_id)
        email = _user_name(self._normalize_email, user_name)
        now = self._clock.now()
        user = User(
            id=self._ids(), email=email, password_hash="", role=Role.VIEWER, org_id=org,
            created_at=now, disabled=not active,
        )  # fmt: skip
        kept = ScimRecord(user.id, external_id, dict(attributes or {}))
        events: list[Event] = [UserProvisioned(user.id, org, principal.actor_id)]
        if not active:
            events.append(UserDisabled(user.id, principal.actor_id))
        async with self._storage.begin() as uow:
            if await uow.users.get_by_email(email) is not None:
                raise EmailTaken("a user with this userName already exists")
            await uow.users.add(user)  # raises EmailTaken on a concurrent duplicate
            await uow.scim.put("User", kept)
            await write_audit(uow, events, now)
            await uow.commit()
        await publish_all(self._bus, events)
        return ScimUser(user, kept)


@attrs.frozen
class ListScimUsers:
    """``await listing(principal)`` → every user of the principal's organization with its
    record, ordered by id (RFC 7644 §3.4.2: the SCIM driver filters and pages them).
    ``Forbidden`` below org_admin."""

    _storage: Storage

    async def __call__(self, principal: Principal) -> list[ScimUser]:
        """The organization's users."""
        org = policy.list_scope(principal, Operation.LIST_USERS, None)
        found: list[User] = []
        after: str | None = None
        async with self._storage.read() as uow:
            records = {} if org is None else await uow.scim.of_org("User", org)
            while True:
                page = await uow.users.list_page(org, after, _PAGE)
                found += page
                if len(page) < _PAGE:
                    return [ScimUser(u, records.get(u.id)) for u in found]
                after = page[-1].id


@attrs.frozen
class GetScimUser:
    """GET /scim/v2/Users/{id}: ``await get(principal, user_id)`` → ``ScimUser``.
    ``Forbidden`` below org_admin; ``NotFound`` when missing or of another organization."""

    _storage: Storage

    async def __call__(self, principal: Principal, user_id: str) -> ScimUser:
        """The user and its record."""
        policy.require(principal, Operation.VIEW_USER)
        async with self._storage.read() as uow:
            user = await user_in_scope(uow, principal, user_id)
            return ScimUser(user, await uow.scim.get("User", user.id))


@attrs.frozen
class UpdateScimUser:
    """PUT and PATCH /scim/v2/Users/{id} (RFC 7644 §3.5): ``await update(principal, user_id,
    user_name=..., active=..., record=...)``, each None when unchanged.

    Rules, checked before anything is written: the user missing or of another organization →
    ``NotFound``; a new ``user_name`` or ``record`` on a superadmin (by an org_admin) →
    ``Forbidden`` (``policy.check_user_management``, ``UPDATE_PROVISIONED_USER``); a
    ``user_name`` that is no email → ``ValidationFailed`` naming ``userName``; one another user
    has → ``EmailTaken``. ``active`` goes first to ``UpdateUser`` as ``disabled = not active``
    (its rules: not a superadmin, not the last one; disabling ends every session); then, in one
    unit of work, the new email (unverified; the user's pending email links void;
    ``ProvisionedEmailChanged``) and the record. Returns the ``ScimUser`` as stored after.
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock
    _normalize_email: EmailNormalizer
    _update: UpdateUser

    async def __call__(
        self,
        principal: Principal,
        user_id: str,
        *,
        user_name: str | None = None,
        active: bool | None = None,
        record: ScimRecord | None = None,
    ) -> ScimUser:
        """Apply the change to ``user_id``."""
        policy.require(principal, Operation.VIEW_USER)
        async with self._storage.read() as uow:
            user = await user_in_scope(uow, principal, user_id)
            stored = await uow.scim.get("User", user.id)
        email = None if user_name is None else _user_name(self._normalize_email, user_name)
        email = None if email == user.email else email
        record = (
            None
            if record is None or record == stored
            else attrs.evolve(record, resource_id=user.id)
        )
        if email is not None or record is not None:
            policy.check_user_management(principal, user, Operation.UPDATE_PROVISIONED_USER)
        if email is not None:
            async with self._storage.read() as uow:
                if await uow.users.get_by_email(email) is not None:
                    raise EmailTaken("a user with this userName already exists")
        if active is not None and active == user.disabled:
            user = await self._update(principal, user.id, disabled=not active)
        if email is None and record is None:
            return ScimUser(user, stored)
        return await self._write(principal, user.id, email, record, stored)

    async def _write(
        self,
        principal: Principal,
        user_id: str,
        email: str | None,
        record: ScimRecord | None,
        stored: ScimRecord | None,
    ) -> ScimUser:
        events: list[Event] = []
        now = self._clock.now()
        async with self._storage.begin() as uow:
            user = await user_in_scope(uow, principal, user_id)
            if email is not None:
                user = attrs.evolve(user, email=email, email_verified=False)
                await uow.users.update(user)  # raises EmailTaken on a concurrent duplicate
                for purpose in EmailTokenPurpose:
                    await uow.email_tokens.void(user.id, purpose)
                events.append(ProvisionedEmailChanged(user.id, principal.actor_id))
            if record is not None:
                await uow.scim.put("User", record)
            await write_audit(uow, events, now)
            await uow.commit()
        await publish_all(self._bus, events)
        return ScimUser(user, record or stored)
