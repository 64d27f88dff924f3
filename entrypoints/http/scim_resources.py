"""Our users and groups as SCIM 2.0 resources (RFC 7643 §4; docs/reference/scim.md, ADR 0054),
and the discovery documents (``ServiceProviderConfig``, ``ResourceTypes``, ``Schemas``), with
``scim2-models``.

A ``User`` is read as the whole RFC 7643 schema with the enterprise extension (``ScimFullUser``:
any attribute an identity provider sends is understood) and kept as ``ProvisionedUser``: the
account's email as ``userName``, ``active`` from the account, and the user's ``ScimRecord``
(``externalId``, ``name``, ``displayName``, ``emails``, ``active`` as last set). A ``Group`` is
the account group, its members (``value``, ``$ref``, ``type``: RFC 7643 §8.7.1) and its
``externalId``.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import Field
from scim2_models import (
    URN,
    AuthenticationScheme,
    Bulk,
    CaseExact,
    ChangePassword,
    ComplexAttribute,
    Context,
    Email,
    EnterpriseUser,
    ETag,
    Filter,
    Group,
    ListResponse,
    Meta,
    Mutability,
    Name,
    NotFoundException,
    Patch,
    Reference,
    Required,
    Resource,
    ResourceType,
    Schema,
    ServiceProviderConfig,
    Sort,
    Uniqueness,
    User,
)

from application.scim.groups import ScimGroup
from application.scim.users import ScimUser
from domain.scim import ScimRecord
from entrypoints.http.scim_wire import MAX_COUNT

__all__ = [
    "ProvisionedGroup",
    "ProvisionedUser",
    "ScimFullUser",
    "as_full_user",
    "group_resource",
    "kept_record",
    "resource_types",
    "schemas",
    "service_provider_config",
    "user_resource",
]

ScimFullUser = User[EnterpriseUser]
"""What a ``User`` request body is read as: RFC 7643's whole ``User`` with the enterprise
extension (§4.3), so that nothing an identity provider sends is refused."""

_MemberRef = Reference[User[Any] | Group]
_KEPT = {"name", "display_name", "emails", "active"}


class ProvisionedUser(Resource[Any]):
    """The ``User`` schema (RFC 7643 §4.1) as this service keeps it, published at
    ``/scim/v2/Schemas``: ``userName`` (the account's email), ``name``, ``displayName``,
    ``active``, ``emails`` and ``externalId`` (RFC 7643 §3.1). The other attributes of a
    ``User`` sent to it are read and ignored."""

    __schema__ = URN(User.__schema__ or "")

    user_name: Annotated[str | None, Uniqueness.server, Required.true] = None
    """The user's email (docs/reference/scim.md): unique across the service."""

    name: Name | None = None
    """The user's name parts, as the client set them."""

    display_name: str | None = None
    """The name to show, as the client set it."""

    active: bool | None = None
    """False for a disabled account; absent when the client removed it from an enabled one."""

    emails: list[Email] | None = None
    """As the client set them (the account's email, ``primary``, for a user it never set)."""


class ProvisionedMember(ComplexAttribute):
    """A member of a ``Group`` as RFC 7643 §8.7.1 describes it: ``value`` (the user id),
    ``$ref`` (its location), ``type`` (``User``)."""

    value: Annotated[str | None, Mutability.immutable, CaseExact.true] = None
    """The member's user id."""

    ref: Annotated[_MemberRef | None, Mutability.immutable] = Field(
        None, serialization_alias="$ref", validation_alias="$ref"
    )
    """The member's location (``/scim/v2/Users/{id}``)."""

    type: Annotated[str | None, Mutability.immutable] = Field(None, examples=["User"])
    """``User``: the members are users (no nested groups)."""


class ProvisionedGroup(Resource[Any]):
    """The ``Group`` schema (RFC 7643 §4.2) as this service keeps it, published at
    ``/scim/v2/Schemas``: ``displayName`` (the group's name), ``members`` and ``externalId``."""

    __schema__ = URN(Group.__schema__ or "")

    display_name: Annotated[str | None, Required.true] = None
    """The group's name: unique in the organization."""

    members: list[ProvisionedMember] | None = None
    """The group's users."""


def kept_record(resource: User[Any], user_id: str) -> ScimRecord:
    """The ``ScimRecord`` of ``user_id`` that ``resource`` (a SCIM ``User`` as sent or as
    patched) sets: its ``externalId`` and the kept attributes, absent ones left out."""
    kept = resource.model_dump(include=_KEPT, exclude_none=True, by_alias=True, mode="json")
    return ScimRecord(user_id, resource.external_id, kept)


def as_full_user(resource: ProvisionedUser) -> ScimFullUser:
    """``resource`` as a ``ScimFullUser``, for a PATCH of any ``User`` path to apply to."""
    data = resource.model_dump(exclude_none=True, by_alias=True, mode="json")
    full: ScimFullUser = ScimFullUser.model_validate(data)
    return full


def user_resource(found: ScimUser, base: str) -> ProvisionedUser:
    """``found`` as a ``ProvisionedUser``: ``userName`` is the account's email; ``active`` is
    false for a disabled account, else true — or absent when the client removed it; the record's
    ``externalId`` and attributes (a user never provisioned: its email as the one ``emails``
    entry); ``meta.location`` under ``base`` (the ``/scim/v2`` URL under ``auth.issuer``)."""
    user, record = found.user, found.record
    if record is None:
        kept: dict[str, Any] = {
            "emails": [{"value": user.email, "primary": True, "type": "work"}],
            "active": True,
        }
    else:
        kept = dict(record.attributes)
    if user.disabled:
        kept["active"] = False
    elif "active" in kept:
        kept["active"] = True
    resource = ProvisionedUser.model_validate(kept)
    resource.id = user.id
    resource.user_name = user.email
    resource.external_id = None if record is None else record.external_id
    resource.meta = Meta(
        resource_type="User", created=user.created_at, last_modified=user.created_at,
        location=f"{base}/Users/{user.id}",
    )  # fmt: skip
    return resource


def group_resource(found: ScimGroup, base: str) -> ProvisionedGroup:
    """``found`` as a ``ProvisionedGroup``: ``displayName`` is its name, ``members`` its users
    (``value`` the id, ``$ref`` their location, ``type`` ``User``), its ``externalId``."""
    group = found.detail.group
    members = [
        ProvisionedMember(value=m.id, type="User", ref=_MemberRef(f"{base}/Users/{m.id}"))
        for m in found.detail.members
    ]
    return ProvisionedGroup(
        id=group.id,
        external_id=found.external_id,
        display_name=group.name,
        members=members or None,
        meta=Meta(
            resource_type="Group", created=group.created_at, last_modified=group.created_at,
            location=f"{base}/Groups/{group.id}",
        ),
    )  # fmt: skip


def as_group(resource: ProvisionedGroup) -> Group:
    """``resource`` as the library's ``Group``, for a PATCH to apply to."""
    group: Group = Group.model_validate(
        resource.model_dump(exclude_none=True, by_alias=True, mode="json")
    )
    return group


def service_provider_config(base: str) -> dict[str, Any]:
    """The ``ServiceProviderConfig`` (RFC 7643 §5): PATCH, filter (``MAX_COUNT`` results) and
    sort supported; bulk, password change and ETags not; OAuth 2.0 bearer tokens."""
    config = ServiceProviderConfig(
        documentation_uri=None,
        patch=Patch(supported=True),
        bulk=Bulk(supported=False, max_operations=0, max_payload_size=0),
        filter=Filter(supported=True, max_results=MAX_COUNT),
        change_password=ChangePassword(supported=False),
        sort=Sort(supported=True),
        etag=ETag(supported=False),
        authentication_schemes=[
            AuthenticationScheme(
                type=AuthenticationScheme.Type.oauthbearertoken, name="OAuth Bearer Token",
                primary=True,
                description="A client credentials access token (RFC 6749 §4.4) with the scim "
                            "scope, from the token endpoint of this service",
            )
        ],
        meta=Meta(resource_type="ServiceProviderConfig",
                  location=f"{base}/ServiceProviderConfig"),
    )  # fmt: skip
    data: dict[str, Any] = config.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE)
    return data


def _resource_types(base: str) -> list[ResourceType]:
    found = []
    for model in (ProvisionedUser, ProvisionedGroup):
        item = ResourceType.from_resource(model)
        item.description = f"{item.name}s of the organization"
        item.meta = Meta(resource_type="ResourceType", location=f"{base}/ResourceTypes/{item.id}")
        found.append(item)
    return found


def resource_types(base: str, name: str | None = None) -> dict[str, Any]:
    """The ``ResourceTypes`` (RFC 7644 §4): ``User`` and ``Group``, as a ``ListResponse``, or
    the one ``name``. Raises ``NotFoundException`` for another name."""
    return _all_or_one(ResourceType, _resource_types(base), name, "resource type")


def schemas(base: str, schema_id: str | None = None) -> dict[str, Any]:
    """The ``Schemas`` (RFC 7643 §7) of ``User`` and ``Group`` as a ``ListResponse``, or the
    one ``schema_id``. Raises ``NotFoundException`` for another id."""
    found = []
    for model, name in ((ProvisionedUser, "User"), (ProvisionedGroup, "Group")):
        schema = model.to_schema()
        schema.name, schema.description = name, f"{name}s of the organization"
        schema.meta = Meta(resource_type="Schema", location=f"{base}/Schemas/{schema.id}")
        found.append(schema)
    return _all_or_one(Schema, found, schema_id, "schema")


D = TypeVar("D", ResourceType, Schema)


def _all_or_one(model: type[D], items: list[D], wanted: str | None, what: str) -> dict[str, Any]:
    """``items`` as a ``ListResponse`` (``wanted`` None), or the one whose id is ``wanted``;
    ``NotFoundException`` naming ``what`` for another id."""
    if wanted is None:
        listed = ListResponse[model](  # type: ignore[valid-type]
            total_results=len(items), start_index=1, items_per_page=len(items), resources=items
        )
        data: dict[str, Any] = listed.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE)
        return data
    for item in items:
        if item.id == wanted:
            one: dict[str, Any] = item.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE)
            return one
    raise NotFoundException(detail=f"no {what} {wanted}")
