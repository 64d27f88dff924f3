"""The admin console's invitations (docs/reference/console.md, docs/reference/invitations.md):
"Invite a user" (email, role, groups of the organization) and the invitations list with resend
and revoke. Each handler calls the JSON API's use case (``CreateInvitation``,
``ListInvitations``, ``ResendInvitation``, ``RevokeInvitation``); ``domain.policy`` decides through
them (an org_admin: its organization, no superadmin invitations; a superadmin: any).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from domain.policy import Principal
from entrypoints.http.console.users import GROUP_FIELD, PAGE_SIZE, invite_form, org_filter
from entrypoints.http.console.web import console_page, done, render
from entrypoints.http.keys import CONTAINER
from entrypoints.http.routing import path_id

__all__ = ["ROUTES_TABLE"]


@console_page
async def invitations_page(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """GET /ui/admin/invitations?org_id=&cursor= → the invitations (status, expiry) with resend
    and revoke, and the invite form."""
    page = await request.app[CONTAINER].list_invitations()(
        me, limit=PAGE_SIZE, cursor=request.query.get("cursor") or None,
        org_id=org_filter(request),
    )  # fmt: skip
    context = {"invitations": page.items, "next_cursor": page.next_cursor,
               "org_id": request.query.get("org_id", ""),
               **await invite_form(request, me)}  # fmt: skip
    return render(request, me, "admin/invitations.html", context)


@console_page
async def invite(request: web.Request, me: Principal, form: dict[str, str]) -> web.Response:
    """POST /ui/admin/invitations ``email``, ``role``, ``org_id`` (superadmin), a
    ``group:<id>`` field per group → ``CreateInvitation`` (the link is mailed); to the list."""
    groups = [name[len(GROUP_FIELD) :] for name in form if name.startswith(GROUP_FIELD)]
    org = form.get("org_id") or None
    await request.app[CONTAINER].create_invitation()(
        me, form.get("email", ""), form.get("role", ""), groups, org
    )
    return done(request, "/ui/admin/invitations", "invited")


@console_page
async def resend(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """POST /ui/admin/invitations/{id}/resend → ``ResendInvitation`` (a new link)."""
    await request.app[CONTAINER].resend_invitation()(me, path_id(request, "id"))
    return done(request, "/ui/admin/invitations", "resent")


@console_page
async def revoke(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """POST /ui/admin/invitations/{id}/revoke → ``RevokeInvitation`` (the link stops working)."""
    await request.app[CONTAINER].revoke_invitation()(me, path_id(request, "id"))
    return done(request, "/ui/admin/invitations", "revoked")


ROUTES_TABLE: list[tuple[str, str, Any]] = [
    ("GET", "/ui/admin/invitations", invitations_page),
    ("POST", "/ui/admin/invitations", invite),
    ("POST", "/ui/admin/invitations/{id}/resend", resend),
    ("POST", "/ui/admin/invitations/{id}/revoke", revoke),
]
"""(method, path, handler) of the invitations pages."""
