"""Handlers of docs/reference/scim.md: SCIM 2.0 provisioning at ``/scim/v2`` (RFC 7644), each
wrapped in ``scim_errors`` (``HANDLERS``). ``entrypoints.http.scim_routes`` registers them and
imports this module (and with it ``scim2-models``, a second of start-up) at the first SCIM request.

Each route authenticates the caller with ``application.scim.access.ScimAuthenticator`` (a client
credentials token with the ``scim`` scope; the client's organization scopes everything), reads
the SCIM body or query with ``entrypoints.http.scim_wire`` and hands over to the use cases of
``application.scim`` and ``application.accounts``. Every error is a SCIM ``Error`` message
(``scim_wire.scim_errors``); every body is ``application/scim+json``. The discovery documents
(``ServiceProviderConfig``, ``ResourceTypes``, ``Schemas``) need no token (RFC 7644 §4).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from scim2_models import (
    Context,
    Group,
    NotFoundException,
    NotImplementedException,
    SearchRequest,
)

from application.scim.groups import GroupChange
from domain.policy import Principal
from entrypoints.http.bearer import bearer_token
from entrypoints.http.keys import CONTAINER
from entrypoints.http.routing import path_id
from entrypoints.http.scim_resources import (
    ProvisionedGroup,
    ProvisionedUser,
    ScimFullUser,
    as_full_user,
    as_group,
    group_resource,
    kept_record,
    resource_types,
    schemas,
    service_provider_config,
    user_resource,
)
from entrypoints.http.scim_routes import PREFIX
from entrypoints.http.scim_wire import (
    list_response,
    read_patch,
    read_resource,
    read_search,
    response_parameters,
    scim_errors,
    scim_response,
    search_request,
)


def _base(request: web.Request) -> str:
    """The SCIM base URL under ``auth.issuer`` (never built from the request's ``Host``)."""
    issuer: str = request.app[CONTAINER].auth_settings().current.issuer
    return issuer.rstrip("/") + PREFIX


async def _caller(request: web.Request) -> Principal:
    authenticate = request.app[CONTAINER].scim_authenticator()
    caller: Principal = await authenticate(bearer_token(request))
    return caller


def _dump(
    resource: ProvisionedUser | ProvisionedGroup, request: web.Request | None = None
) -> dict[str, Any]:
    """``resource`` for a response, with the ``attributes``/``excludedAttributes`` of
    ``request``'s query when given (RFC 7644 §3.9)."""
    params = None if request is None else response_parameters(request, type(resource))
    data: dict[str, Any] = resource.model_dump(
        scim_ctx=Context.RESOURCE_QUERY_RESPONSE, response_parameters=params
    )
    return data


# --------------------------------------------------------------------------- Users


async def list_users(request: web.Request) -> web.Response:
    """GET /scim/v2/Users → 200 ``ListResponse`` of the organization's users matching
    ``filter``, sorted and paged (RFC 7644 §3.4.2)."""
    caller = await _caller(request)
    return await _users(request, caller, search_request(request, ProvisionedUser))


async def search_users(request: web.Request) -> web.Response:
    """POST /scim/v2/Users/.search ``SearchRequest`` → 200 ``ListResponse`` (RFC 7644
    §3.4.3), as GET /scim/v2/Users with the query in the body."""
    caller = await _caller(request)
    return await _users(request, caller, await read_search(request, ProvisionedUser))


async def _users(
    request: web.Request, caller: Principal, search: SearchRequest[ProvisionedUser]
) -> web.Response:
    base = _base(request)
    users = await request.app[CONTAINER].list_scim_users()(caller)
    every = [user_resource(u, base) for u in users]
    return scim_response(list_response(search, ProvisionedUser, every))


async def create_user(request: web.Request) -> web.Response:
    """POST /scim/v2/Users ``User`` → 201 ``User`` (RFC 7644 §3.3); 409 ``uniqueness`` when
    the ``userName`` (email) exists. ``active`` defaults to true."""
    caller = await _caller(request)
    sent = await read_resource(request, ScimFullUser, Context.RESOURCE_CREATION_REQUEST)
    sent.active = True if sent.active is None else sent.active
    kept = kept_record(sent, "")
    created = await request.app[CONTAINER].provision_user()(
        caller, sent.user_name or "", sent.active, external_id=kept.external_id,
        attributes=kept.attributes,
    )  # fmt: skip
    resource = user_resource(created, _base(request))
    location = resource.meta.location if resource.meta else None
    return scim_response(_dump(resource), 201, location=location)


async def get_user(request: web.Request) -> web.Response:
    """GET /scim/v2/Users/{id} → 200 ``User``; 404 outside the client's organization."""
    caller = await _caller(request)
    found = await request.app[CONTAINER].get_scim_user()(caller, path_id(request, "id"))
    return scim_response(_dump(user_resource(found, _base(request)), request))


async def replace_user(request: web.Request) -> web.Response:
    """PUT /scim/v2/Users/{id} ``User`` → 200 ``User`` (RFC 7644 §3.5.1): a new ``userName``
    is a new email (unverified), ``active`` applied (absent: enabled, as the attribute
    unassigned means), the kept attributes replaced."""
    caller = await _caller(request)
    user_id = path_id(request, "id")
    sent = await read_resource(request, ScimFullUser, Context.RESOURCE_REPLACEMENT_REQUEST)
    found = await request.app[CONTAINER].update_scim_user()(
        caller, user_id, user_name=sent.user_name, active=sent.active is not False,
        record=kept_record(sent, user_id),
    )  # fmt: skip
    return scim_response(_dump(user_resource(found, _base(request))))


async def patch_user(request: web.Request) -> web.Response:
    """PATCH /scim/v2/Users/{id} ``PatchOp`` → 200 ``User`` (RFC 7644 §3.5.2): the operations
    are applied to the user as SCIM sees it, then ``userName``, ``active`` and the kept
    attributes are taken from the result (``active: false`` disables the user and ends its
    sessions; ``true``, or ``active`` removed, enables it)."""
    caller = await _caller(request)
    user_id = path_id(request, "id")
    patch = await read_patch(request, ScimFullUser)
    container = request.app[CONTAINER]
    base = _base(request)
    resource = as_full_user(user_resource(await container.get_scim_user()(caller, user_id), base))
    before = (resource.user_name, resource.active)
    patch.patch(resource)
    user_name = None if resource.user_name == before[0] else (resource.user_name or "")
    active = None if resource.active == before[1] else resource.active is not False
    found = await container.update_scim_user()(
        caller, user_id, user_name=user_name, active=active,
        record=kept_record(resource, user_id),
    )  # fmt: skip
    return scim_response(_dump(user_resource(found, base)))


async def delete_user(request: web.Request) -> web.Response:
    """DELETE /scim/v2/Users/{id} → 204: the user is deleted as DELETE /users/{id} does."""
    caller = await _caller(request)
    await request.app[CONTAINER].delete_user()(caller, path_id(request, "id"))
    return web.Response(status=204)


# --------------------------------------------------------------------------- Groups


def _member_ids(group: Group | ProvisionedGroup) -> tuple[str, ...]:
    return tuple(m.value for m in group.members or () if m.value is not None)


async def list_groups(request: web.Request) -> web.Response:
    """GET /scim/v2/Groups → 200 ``ListResponse`` of the organization's groups matching
    ``filter``, sorted and paged (RFC 7644 §3.4.2)."""
    caller = await _caller(request)
    return await _groups(request, caller, search_request(request, ProvisionedGroup))


async def search_groups(request: web.Request) -> web.Response:
    """POST /scim/v2/Groups/.search ``SearchRequest`` → 200 ``ListResponse`` (RFC 7644
    §3.4.3), as GET /scim/v2/Groups with the query in the body."""
    caller = await _caller(request)
    return await _groups(request, caller, await read_search(request, ProvisionedGroup))


async def _groups(
    request: web.Request, caller: Principal, search: SearchRequest[ProvisionedGroup]
) -> web.Response:
    base = _base(request)
    groups = await request.app[CONTAINER].list_scim_groups()(caller)
    every = [group_resource(g, base) for g in groups]
    return scim_response(list_response(search, ProvisionedGroup, every))


async def create_group(request: web.Request) -> web.Response:
    """POST /scim/v2/Groups ``Group`` → 201 ``Group`` with its members (RFC 7644 §3.3)."""
    caller = await _caller(request)
    sent = await read_resource(request, Group, Context.RESOURCE_CREATION_REQUEST)
    change = GroupChange(
        name=sent.display_name or "", members=_member_ids(sent), external_id=sent.external_id
    )
    found = await request.app[CONTAINER].write_scim_group()(caller, None, change)
    created = group_resource(found, _base(request))
    location = created.meta.location if created.meta else None
    return scim_response(_dump(created), 201, location=location)


async def get_group(request: web.Request) -> web.Response:
    """GET /scim/v2/Groups/{id} → 200 ``Group``; 404 outside the client's organization."""
    caller = await _caller(request)
    found = await request.app[CONTAINER].get_scim_group()(caller, path_id(request, "id"))
    return scim_response(_dump(group_resource(found, _base(request)), request))


async def replace_group(request: web.Request) -> web.Response:
    """PUT /scim/v2/Groups/{id} ``Group`` → 200 ``Group``: its name and whole member list."""
    caller = await _caller(request)
    group_id = path_id(request, "id")
    sent = await read_resource(request, Group, Context.RESOURCE_REPLACEMENT_REQUEST)
    change = GroupChange(
        name=sent.display_name or "", members=_member_ids(sent), external_id=sent.external_id
    )
    found = await request.app[CONTAINER].write_scim_group()(caller, group_id, change)
    return scim_response(_dump(group_resource(found, _base(request))))


async def patch_group(request: web.Request) -> web.Response:
    """PATCH /scim/v2/Groups/{id} ``PatchOp`` → 200 ``Group`` (RFC 7644 §3.5.2): members
    added, removed (by filter or, as Entra ID sends, by value) or replaced, ``displayName``
    replaced; all in one unit of work."""
    caller = await _caller(request)
    group_id = path_id(request, "id")
    patch = await read_patch(request, Group)
    container = request.app[CONTAINER]
    base = _base(request)
    resource = as_group(group_resource(await container.get_scim_group()(caller, group_id), base))
    name_before = resource.display_name
    patch.patch(resource)
    name = None if resource.display_name == name_before else (resource.display_name or "")
    change = GroupChange(name=name, members=_member_ids(resource), external_id=resource.external_id)
    found = await container.write_scim_group()(caller, group_id, change)
    return scim_response(_dump(group_resource(found, base)))


async def delete_group(request: web.Request) -> web.Response:
    """DELETE /scim/v2/Groups/{id} → 204: the group and its memberships go."""
    caller = await _caller(request)
    await request.app[CONTAINER].delete_group()(caller, path_id(request, "id"))
    return web.Response(status=204)


# --------------------------------------------------------------------------- discovery


async def no_such_endpoint(request: web.Request) -> web.Response:
    """GET /scim/v2/{anything else} → 404 SCIM ``Error`` (RFC 7644 §3.12)."""
    raise NotFoundException(detail="no such SCIM endpoint")


async def search_everything(request: web.Request) -> web.Response:
    """POST /scim/v2/.search → 501 (RFC 7644 §3.4.3: searching every resource type at once is
    not offered; ``Users/.search`` and ``Groups/.search`` are)."""
    await _caller(request)
    raise NotImplementedException(detail="search Users/.search or Groups/.search instead")


async def get_service_provider_config(request: web.Request) -> web.Response:
    """GET /scim/v2/ServiceProviderConfig → 200 (RFC 7643 §5); no token needed."""
    return scim_response(service_provider_config(_base(request)))


async def list_resource_types(request: web.Request) -> web.Response:
    """GET /scim/v2/ResourceTypes → 200 ``ListResponse`` (RFC 7644 §4)."""
    return scim_response(resource_types(_base(request)))


async def get_resource_type(request: web.Request) -> web.Response:
    """GET /scim/v2/ResourceTypes/{name} → 200 ``ResourceType``, 404 for another name."""
    return scim_response(resource_types(_base(request), request.match_info["name"]))


async def list_schemas(request: web.Request) -> web.Response:
    """GET /scim/v2/Schemas → 200 ``ListResponse`` (RFC 7643 §7)."""
    return scim_response(schemas(_base(request)))


async def get_schema(request: web.Request) -> web.Response:
    """GET /scim/v2/Schemas/{id} → 200 ``Schema``, 404 for another id."""
    return scim_response(schemas(_base(request), request.match_info["id"]))


HANDLERS = {
    fn.__name__: scim_errors(fn)
    for fn in (
        list_users,
        search_users,
        create_user,
        get_user,
        replace_user,
        patch_user,
        delete_user,
        list_groups,
        search_groups,
        create_group,
        get_group,
        replace_group,
        patch_group,
        delete_group,
        get_service_provider_config,
        list_resource_types,
        get_resource_type,
        list_schemas,
        get_schema,
        search_everything,
        no_such_endpoint,
    )
}
"""Every handler by name, wrapped in ``scim_errors``."""
