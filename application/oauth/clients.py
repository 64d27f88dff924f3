"""The OAuth client registry (docs/reference/oauth-and-oidc.md): register, list, read, change,
delete clients and rotate their secrets — org_admin (its organization) and superadmin.

A secret is an opaque token of 256 random bits
(``application.shared.steps.new_opaque_token``), shown once and stored only as its SHA-256
hash (ADR 0020). Access is decided by ``domain.policy``: role (``Forbidden``), then
organization scope (``NotFound``). Each change commits with its audit row;
events are published after the commit.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import attrs

from application.events.audit import record
from application.events.clients import (
    ClientCreated,
    ClientDeleted,
    ClientSecretRotated,
    ClientUpdated,
)
from application.oauth.client_fields import (
    CLEAR,
    CLEARABLE_FIELDS,
    CODE_FLOW_FIELDS,
    check_code_flow_client,
    check_code_flow_values,
    checked_alg,
)
from application.ports import Clock, EventBus, Storage, UnitOfWork
from application.shared.checks import check_name, check_org_id, invalid
from application.shared.pagination import Listing
from application.shared.settings import AuthSettings, Live, OAuthSettings
from application.shared.steps import IdFactory, new_id, new_opaque_token
from domain import policy
from domain.clients import Client, check_audience, check_scopes
from domain.errors import NotFound
from domain.policy import Actor, Operation

__all__ = [
    "CreateClient",
    "DeleteClient",
    "GetClient",
    "ListClients",
    "NewClient",
    "RotateClientSecret",
    "UpdateClient",
    "client_in_scope",
]

_NOT_FOUND = "client not found"


@attrs.frozen
class NewClient:
    """A client just registered, with its secret in clear (shown once, never stored); None
    for a public client, which has none."""

    client: Client
    client_secret: str | None = attrs.field(repr=False)


async def client_in_scope(uow: UnitOfWork, actor: Actor, client_id: str) -> Client:
    """The client ``client_id``; ``NotFound`` when missing or outside ``actor``'s
    organization (the same answer for both)."""
    client = await uow.clients.get(client_id)
    if client is None:
        raise NotFound(_NOT_FOUND)
    policy.require_in_scope(actor, client.org_id, "client")
    return client


class ListClients(Listing[Client]):
    """GET /oauth/clients: org_admin (its organization; another ``org_id`` → ``NotFound``) and
    superadmin (every organization, or ``org_id``); viewer/operator → ``Forbidden``. ``limit``
    and ``cursor`` as for users. Returns ``Page[Client]`` ordered by client id."""

    def __init__(self, storage: Storage) -> None:
        super().__init__(
            storage, "clients", Operation.LIST_CLIENTS, lambda uow: uow.clients, lambda c: c.id
        )


@attrs.frozen
class GetClient:
    """GET /oauth/clients/{client_id}: viewer/operator → ``Forbidden``; missing or of another
    organization → ``NotFound``. Returns the ``Client``."""

    _storage: Storage

    async def __call__(self, actor: Actor, client_id: str) -> Client:
        """The client ``client_id``."""
        policy.require(actor, Operation.VIEW_CLIENT)
        async with self._storage.begin() as uow:
            return await client_in_scope(uow, actor, client_id)


@attrs.frozen
class CreateClient:
    """POST /oauth/clients ``{"name", "scopes", "audience"?, "org_id"?, "require_dpop"?,
    "access_token_signed_response_alg"?}``.

    Rules: viewer/operator → ``Forbidden``; an org_admin registers in its own organization (an
    ``org_id`` naming another → ``NotFound``), a superadmin in any (default: its own).
    ``name`` as a group name; ``scopes`` RFC 6749 scope tokens (at most 64); ``audience`` a
    string or 1 to 16 values (default ``[auth.audience]``); a bad value → ``ValidationFailed``
    naming the field. An org_admin may name only ``auth.audience`` and the ``oauth.resources``
    of the client's organization or shared ones, with scopes among theirs
    (``policy.check_client_resources``; 422 naming ``audience`` or ``scopes``; with
    ``auth.audience``, only ``oauth.shared_scopes``); a superadmin and the command line may
    name any. ``skip_consent`` and ``all_organizations`` are for a superadmin and the command
    line: an org_admin's request carrying either → ``Forbidden`` (403, before anything else is
    checked; ``policy.check_first_party_fields``). ``access_token_signed_response_alg`` must
    be one of ``auth.algorithms`` (docs/reference/oauth-and-oidc.md; 422 naming it). The
    code-flow fields (``public`` and ``code_flow``: the names of ``CODE_FLOW_FIELDS``) are
    checked by ``application.oauth.client_fields``; a public client gets no secret and
    defaults to ``grant_types ["authorization_code"]`` and ``token_endpoint_auth_method
    "none"``. Records and publishes ``ClientCreated``. Returns ``NewClient`` (the secret,
    shown once; None for a public client).
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock
    _settings: Live[AuthSettings]
    _oauth: Live[OAuthSettings]
    _ids: IdFactory = new_id

    async def __call__(
        self,
        actor: Actor,
        name: str,
        scopes: Any,
        *,
        audience: Any = None,
        org_id: str | None = None,
        require_dpop: bool = False,
        access_token_signed_response_alg: str | None = None,
        public: bool = False,
        **code_flow: Any,
    ) -> NewClient:
        """Register the client ``name``."""
        policy.require(actor, Operation.CREATE_CLIENT)
        policy.check_first_party_fields(actor, code_flow)
        org = check_org_id(policy.target_org(actor, Operation.CREATE_CLIENT, org_id))
        alg = checked_alg(
            access_token_signed_response_alg, self._settings.current,
            "access_token_signed_response_alg",
        )  # fmt: skip
        if not isinstance(public, bool):
            raise invalid("public", "must be a boolean")
        flow = _code_flow(
            {k: v for k, v in code_flow.items() if v is not None}, self._settings.current,
            self._oauth.current,
        )  # fmt: skip
        if public:
            flow.setdefault("grant_types", ("authorization_code",))
            flow.setdefault("token_endpoint_auth_method", "none")
        shared = self._settings.current.audience
        aud = (shared,) if audience is None else check_audience(audience)
        checked_name, checked_scopes = check_name(name), check_scopes(scopes)
        policy.check_client_resources(
            actor, org, aud, checked_scopes, self._oauth.current.resources, shared,
            self._oauth.current.shared_scopes,
        )  # fmt: skip
        secret, secret_hash = (None, "") if public else new_opaque_token()
        client = Client(
            id=self._ids(),
            name=checked_name,
            org_id=org,
            scopes=checked_scopes,
            audience=aud,
            require_dpop=bool(require_dpop),
            disabled=False,
            created_at=self._clock.now(),
            secret_hash=secret_hash,
            access_token_signed_response_alg=alg,
            public=public,
            **flow,
        )
        check_code_flow_client(client)
        created = ClientCreated(client.id, org, actor.actor_id)
        async with self._storage.begin() as uow:
            await uow.clients.add(client)
            await record(uow, [created], client.created_at)
            await uow.commit()
        await self._bus.publish(created)
        return NewClient(client, secret)


@attrs.frozen
class UpdateClient:
    """PATCH /oauth/clients/{client_id} ``{"name"?, "scopes"?, "audience"?, "require_dpop"?,
    "disabled"?, "access_token_signed_response_alg"?}``: at least one (the algorithm checked as
    by ``CreateClient``).

    Rules: viewer/operator → ``Forbidden``; ``skip_consent`` or ``all_organizations`` from an
    org_admin → ``Forbidden`` (as for ``CreateClient``); missing or of another organization →
    ``NotFound``; bad values → ``ValidationFailed`` naming the field. When ``audience`` or
    ``scopes`` is given, the client's resulting audiences and scopes follow ``CreateClient``'s
    rule for the actor (``policy.check_client_resources``). Disabling a client makes its live tokens
    inactive at once (introspection and the token endpoint read ``disabled``). Records and
    publishes ``ClientUpdated`` naming the fields that changed (nothing when none did). Returns
    the updated ``Client``.

    ``jwks`` and ``jwks_uri`` (``CLEARABLE_FIELDS``) may be ``CLEAR`` (a JSON ``null``): set
    back to none; a ``private_key_jwt`` client must keep exactly one of them (422 naming
    ``jwks``). ``jwks_uri`` follows ``oauth.allow_private_jwks_uri`` as at registration
    (``client_fields.check_jwks_uri``).
    """

    _storage: Storage
    _bus: EventBus
    _clock: Clock
    _settings: Live[AuthSettings]
    _oauth: Live[OAuthSettings]

    async def __call__(self, actor: Actor, client_id: str, **changes: Any) -> Client:
        """Apply ``changes`` (the body's fields) to the client ``client_id``."""
        policy.require(actor, Operation.UPDATE_CLIENT)
        policy.check_first_party_fields(actor, changes)
        values = _checked(changes)
        if "access_token_signed_response_alg" in values:
            values["access_token_signed_response_alg"] = checked_alg(
                values["access_token_signed_response_alg"], self._settings.current,
                "access_token_signed_response_alg",
            )  # fmt: skip
        cleared = {k for k, v in values.items() if v is CLEAR}
        values = check_code_flow_values(
            {k: v for k, v in values.items() if k not in cleared}, self._settings.current,
            allow_private_jwks_uri=self._oauth.current.allow_private_jwks_uri,
        ) | dict.fromkeys(cleared)  # fmt: skip
        async with self._storage.begin() as uow:
            client = await client_in_scope(uow, actor, client_id)
            if "audience" in values or "scopes" in values:
                policy.check_client_resources(
                    actor, client.org_id, values.get("audience", client.audience),
                    values.get("scopes", client.scopes), self._oauth.current.resources,
                    self._settings.current.audience, self._oauth.current.shared_scopes,
                )  # fmt: skip
            changed = sorted(k for k, v in values.items() if getattr(client, k) != v)
            if not changed:
                return client
            client = attrs.evolve(client, **values)
            check_code_flow_client(client)
            updated = ClientUpdated(client.id, client.org_id, actor.actor_id, ",".join(changed))
            await uow.clients.update(client)
            await record(uow, [updated], self._clock.now())
            await uow.commit()
        await self._bus.publish(updated)
        return client


def _checked(changes: dict[str, Any]) -> dict[str, Any]:
    """The checked values of a PATCH body (``ValidationFailed`` naming the field)."""
    known = {
        "name", "scopes", "audience", "require_dpop", "disabled",
        "access_token_signed_response_alg", *CODE_FLOW_FIELDS,
    }  # fmt: skip
    values = {k: v for k, v in changes.items() if v is not None}
    if not values or not set(values) <= known:
        raise invalid("body", f"must hold at least one of {', '.join(sorted(known))}")
    for key, value in values.items():
        if value is CLEAR and key not in CLEARABLE_FIELDS:
            raise invalid(key, "must not be null")
    checks = {"name": check_name, "scopes": check_scopes, "audience": check_audience}
    for key, check in checks.items():
        if key in values:
            values[key] = check(values[key])
    for key in ("require_dpop", "disabled"):
        if key in values and not isinstance(values[key], bool):
            raise invalid(key, "must be a boolean")
    return values


def _code_flow(
    values: dict[str, Any], settings: AuthSettings, oauth: OAuthSettings
) -> dict[str, Any]:
    """The code-flow fields of a registration, checked (``ValidationFailed`` naming one; a
    ``CLEAR`` is for a change only)."""
    unknown = set(values) - set(CODE_FLOW_FIELDS)
    if unknown:
        raise invalid(sorted(unknown)[0], "is not a field of a client")
    for key, value in values.items():
        if value is CLEAR:
            raise invalid(key, "must not be null")
    return check_code_flow_values(
        values, settings, allow_private_jwks_uri=oauth.allow_private_jwks_uri
    )


@attrs.frozen
class DeleteClient:
    """DELETE /oauth/clients/{client_id}: viewer/operator → ``Forbidden``; missing or of
    another organization → ``NotFound``. Its live tokens are inactive at once. Records and
    publishes ``ClientDeleted``."""

    _storage: Storage
    _bus: EventBus
    _clock: Clock

    async def __call__(self, actor: Actor, client_id: str) -> None:
        """Delete the client ``client_id``."""
        policy.require(actor, Operation.DELETE_CLIENT)
        async with self._storage.begin() as uow:
            client = await client_in_scope(uow, actor, client_id)
            deleted = ClientDeleted(client.id, client.org_id, actor.actor_id)
            await uow.clients.delete(client.id)
            await record(uow, [deleted], self._clock.now())
            await uow.commit()
        await self._bus.publish(deleted)


@attrs.frozen
class RotateClientSecret:
    """POST /oauth/clients/{client_id}/secret: a new secret, shown once. The previous one keeps
    working ``oauth.secret_grace`` seconds (0: it stops at once). viewer/operator →
    ``Forbidden``; missing or of another organization → ``NotFound``. Records and publishes
    ``ClientSecretRotated``. A public client has no secret: ``ValidationFailed`` naming
    ``public``. Returns the new secret."""

    _storage: Storage
    _bus: EventBus
    _clock: Clock
    _settings: Live[OAuthSettings]

    async def __call__(self, actor: Actor, client_id: str) -> str:
        """Rotate the secret of the client ``client_id``."""
        policy.require(actor, Operation.ROTATE_CLIENT_SECRET)
        grace = self._settings.current.secret_grace
        now = self._clock.now()
        secret, secret_hash = new_opaque_token()
        async with self._storage.begin() as uow:
            client = await client_in_scope(uow, actor, client_id)
            if client.public:
                raise invalid("public", "a public client has no secret to rotate")
            client = attrs.evolve(
                client,
                secret_hash=secret_hash,
                secret_rotated_at=now,
                previous_secret_hash=client.secret_hash if grace else None,
                previous_secret_expires_at=now + timedelta(seconds=grace) if grace else None,
            )
            rotated = ClientSecretRotated(client.id, client.org_id, actor.actor_id, grace)
            await uow.clients.update(client)
            await record(uow, [rotated], now)
            await uow.commit()
        await self._bus.publish(rotated)
        return secret
