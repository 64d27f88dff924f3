"""The admin console's users (docs/reference/console.md): search by email prefix with paging, one
user's page (role, organization, groups, sessions, MFA, passkeys, identities at other
providers) and its actions — set the role, move to another organization (superadmin), disable /
enable, delete (after a confirmation page), end one or every session, turn MFA off, delete a
passkey, mail a password-reset link.

Each handler calls the JSON API's use case for the action (``SearchUsers``, ``GetUser``,
``SetRole``, ``UpdateUser``, ``DeleteUser``, ``ListSessions``, ``EndUserSession(s)``,
``ResetUserMfa``, ``PasskeyAdmin``, ``PasswordRecovery.send_to_user``): ``domain.policy``
decides, through them, what the caller may see and do; a refusal is a page of the same status
(``console.failed``). Whether the move form is offered is ``policy.can``'s answer for the
caller, never the template's.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from domain import policy
from domain.errors import FieldError, Forbidden, ValidationFailed
from domain.model import Role
from domain.policy import Operation, Principal
from domain.texts import Text
from entrypoints.http.console.web import confirm, console_page, done, render
from entrypoints.http.keys import CONTAINER
from entrypoints.http.requests import client_address
from entrypoints.http.routing import path_id

__all__ = ["GROUP_FIELD", "PAGE_SIZE", "ROUTES_TABLE", "invite_form", "org_filter"]

PAGE_SIZE = 25
ROLES = [r.value for r in Role]


def org_filter(request: web.Request) -> str | None:
    """The ``org_id`` filter of a listing (a superadmin's choice; the use case refuses another
    organization to anyone else with its 404)."""
    return request.query.get("org_id") or None


GROUP_FIELD = "group:"
"""The form field of each group checkbox is this prefix and the group's id (a form names each
field once)."""
_MAX_GROUPS_SHOWN = 200


async def invite_form(request: web.Request, me: Principal) -> dict[str, Any]:
    """What the "Invite a user" form shows: the roles the caller may grant and the groups of
    the organization the invitation would go to (the filtered one for a superadmin, else the
    caller's)."""
    org = org_filter(request) or me.org_id
    groups = await request.app[CONTAINER].list_groups()(me, limit=_MAX_GROUPS_SHOWN, org_id=org)
    roles = [r.value for r in Role if me.is_superadmin or r is not Role.SUPERADMIN]
    return {"invite_roles": roles, "invite_groups": [g.group for g in groups.items],
            "invite_org": org, "group_field": GROUP_FIELD}  # fmt: skip


@console_page
async def users_page(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """GET /ui/admin/users?email=&org_id=&cursor= → the users whose email starts with
    ``email`` (any case), ``PAGE_SIZE`` a page; and "Invite a user" (``invite_form``)."""
    email = request.query.get("email", "")
    page = await request.app[CONTAINER].search_users()(
        me, email=email, limit=PAGE_SIZE, cursor=request.query.get("cursor") or None,
        org_id=org_filter(request),
    )  # fmt: skip
    context = {"users": page.items, "next_cursor": page.next_cursor, "email": email,
               "org_id": request.query.get("org_id", ""),
               **await invite_form(request, me)}  # fmt: skip
    return render(request, me, "admin/users.html", context)


async def _optional(call: Any) -> Any:
    """A part of the user page the caller may not see (an org_admin's own passkeys: /me
    only) is left out: the use case's ``Forbidden`` becomes None."""
    try:
        return await call
    except Forbidden:
        return None


@console_page
async def user_page(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """GET /ui/admin/users/{id} → the user, its groups, identities, live sessions and
    passkeys."""
    container = request.app[CONTAINER]
    user_id = path_id(request, "id")
    detail = await container.get_user().detail(me, user_id)
    sessions = await _optional(container.list_sessions()(me, user_id))
    passkeys = await _optional(container.passkey_admin().list(me, user_id))
    context = {"user": detail.user, "groups": detail.groups, "identities": detail.identities,
               "sessions": sessions, "passkeys": passkeys, "roles": ROLES,
               "can_move": policy.can(me, Operation.MOVE_USER)}  # fmt: skip
    return render(request, me, "admin/user.html", context)


def _back(user_id: str) -> str:
    return f"/ui/admin/users/{user_id}"


@console_page
async def set_role(request: web.Request, me: Principal, form: dict[str, str]) -> web.Response:
    """POST /ui/admin/users/{id}/role ``role`` → ``SetRole`` (the escalation rules apply)."""
    user_id = path_id(request, "id")
    await request.app[CONTAINER].set_role()(me, user_id, form.get("role", ""))
    return done(request, _back(user_id), "role")


@console_page
async def set_disabled(request: web.Request, me: Principal, form: dict[str, str]) -> web.Response:
    """POST /ui/admin/users/{id}/disabled ``disabled`` (``true`` | ``false``) → ``UpdateUser``
    (disabling ends every session)."""
    user_id = path_id(request, "id")
    value = form.get("disabled")
    if value not in ("true", "false"):
        raise ValidationFailed([FieldError("disabled", "must be true or false")])
    await request.app[CONTAINER].update_user()(me, user_id, disabled=value == "true")
    return done(request, _back(user_id), "disabled" if value == "true" else "enabled")


@console_page
async def move_user(request: web.Request, me: Principal, form: dict[str, str]) -> web.Response:
    """POST /ui/admin/users/{id}/org ``org_id`` → ``UpdateUser`` (superadmin; the user leaves
    its old organization's groups)."""
    user_id = path_id(request, "id")
    await request.app[CONTAINER].update_user()(me, user_id, org_id=form.get("org_id", ""))
    return done(request, _back(user_id), "moved")


@console_page
async def confirm_delete_user(request: web.Request, me: Principal, _: Any) -> web.Response:
    """GET /ui/admin/users/{id}/delete → the confirmation page (``GetUser`` first)."""
    user = await request.app[CONTAINER].get_user()(me, path_id(request, "id"))
    what = Text("The user {email} of organization {org}.", email=user.email, org=user.org_id)
    goes = Text("Its sessions, refresh tokens, passkeys, group memberships and identities at"
                " other providers go with it; its email may register again.")  # fmt: skip
    return confirm(request, me, title=Text("Delete this user"), what=what, consequence=goes,
                   cancel=_back(user.id))  # fmt: skip


@console_page
async def delete_user(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """POST /ui/admin/users/{id}/delete → ``DeleteUser``; back to the list."""
    await request.app[CONTAINER].delete_user()(me, path_id(request, "id"))
    return done(request, "/ui/admin/users", "deleted")


@console_page
async def end_sessions(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """POST /ui/admin/users/{id}/sessions/end → ``EndUserSessions`` (every session)."""
    user_id = path_id(request, "id")
    await request.app[CONTAINER].end_user_sessions()(me, user_id)
    return done(request, _back(user_id), "sessions")


@console_page
async def end_session(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """POST /ui/admin/users/{id}/sessions/{sid}/end → ``EndUserSession`` (that one)."""
    user_id = path_id(request, "id")
    await request.app[CONTAINER].end_user_session()(me, user_id, path_id(request, "sid"))
    return done(request, _back(user_id), "session")


@console_page
async def reset_mfa(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """POST /ui/admin/users/{id}/mfa/off → ``ResetUserMfa``."""
    user_id = path_id(request, "id")
    await request.app[CONTAINER].reset_user_mfa()(me, user_id)
    return done(request, _back(user_id), "mfa")


@console_page
async def delete_passkey(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """POST /ui/admin/users/{id}/passkeys/{pid}/delete → ``PasskeyAdmin.delete``."""
    user_id = path_id(request, "id")
    await request.app[CONTAINER].passkey_admin().delete(me, user_id, path_id(request, "pid"))
    return done(request, _back(user_id), "passkey")


@console_page
async def send_reset(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """POST /ui/admin/users/{id}/password-reset → ``PasswordRecovery.send_to_user`` (the
    JSON API's POST /users/{id}/password-reset: its policy, its throttle, its audit row)."""
    container = request.app[CONTAINER]
    user_id = path_id(request, "id")
    client = client_address(request, container.config().server.trusted_proxies)
    await container.password_recovery().send_to_user(me, user_id, client)
    return done(request, _back(user_id), "reset_sent")


ROUTES_TABLE: list[tuple[str, str, Any]] = [
    ("GET", "/ui/admin/users", users_page),
    ("GET", "/ui/admin/users/{id}", user_page),
    ("POST", "/ui/admin/users/{id}/role", set_role),
    ("POST", "/ui/admin/users/{id}/disabled", set_disabled),
    ("POST", "/ui/admin/users/{id}/org", move_user),
    ("GET", "/ui/admin/users/{id}/delete", confirm_delete_user),
    ("POST", "/ui/admin/users/{id}/delete", delete_user),
    ("POST", "/ui/admin/users/{id}/sessions/end", end_sessions),
    ("POST", "/ui/admin/users/{id}/sessions/{sid}/end", end_session),
    ("POST", "/ui/admin/users/{id}/mfa/off", reset_mfa),
    ("POST", "/ui/admin/users/{id}/passkeys/{pid}/delete", delete_passkey),
    ("POST", "/ui/admin/users/{id}/password-reset", send_reset),
]
"""(method, path, handler) of the users pages."""
