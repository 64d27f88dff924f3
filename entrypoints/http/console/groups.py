"""The admin console's groups and members (docs/reference/console.md): list, create, rename and
delete groups (after a confirmation page); add a member (by email or id) and remove one. Through the
JSON API's use cases (``ListGroups``, ``GetGroup``, ``CreateGroup``, ``RenameGroup``,
``DeleteGroup``, ``AddMember``, ``RemoveMember``; a member named by email is found with
``SearchUsers``), so ``domain.policy`` decides: an org_admin's groups are its organization's; a
member must belong to the group's organization (422)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from domain.errors import NotFound
from domain.policy import Principal
from domain.texts import Text
from entrypoints.http.console.users import org_filter
from entrypoints.http.console.web import confirm, console_page, done, render
from entrypoints.http.keys import CONTAINER
from entrypoints.http.routing import path_id

__all__ = ["ROUTES_TABLE"]

PAGE_SIZE = 50


@console_page
async def groups_page(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """GET /ui/admin/groups?org_id=&cursor= → the groups and a form to create one."""
    page = await request.app[CONTAINER].list_groups()(
        me, limit=PAGE_SIZE, cursor=request.query.get("cursor") or None,
        org_id=org_filter(request),
    )  # fmt: skip
    context = {"groups": page.items, "next_cursor": page.next_cursor,
               "org_id": request.query.get("org_id", "")}  # fmt: skip
    return render(request, me, "admin/groups.html", context)


@console_page
async def create_group(request: web.Request, me: Principal, form: dict[str, str]) -> web.Response:
    """POST /ui/admin/groups ``name`` [``org_id``] → ``CreateGroup``; to the new group."""
    summary = await request.app[CONTAINER].create_group()(
        me, form.get("name", ""), form.get("org_id") or None
    )
    return done(request, f"/ui/admin/groups/{summary.group.id}", "group")


@console_page
async def group_page(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """GET /ui/admin/groups/{id} → the group, its members and the member forms."""
    detail = await request.app[CONTAINER].get_group()(me, path_id(request, "id"))
    return render(request, me, "admin/group.html", {"detail": detail})


@console_page
async def rename_group(request: web.Request, me: Principal, form: dict[str, str]) -> web.Response:
    """POST /ui/admin/groups/{id}/rename ``name`` → ``RenameGroup``."""
    group_id = path_id(request, "id")
    await request.app[CONTAINER].rename_group()(me, group_id, form.get("name", ""))
    return done(request, f"/ui/admin/groups/{group_id}", "renamed")


@console_page
async def confirm_delete_group(request: web.Request, me: Principal, _: Any) -> web.Response:
    """GET /ui/admin/groups/{id}/delete → the confirmation page (``GetGroup`` first)."""
    detail = await request.app[CONTAINER].get_group()(me, path_id(request, "id"))
    g = detail.summary.group
    what = Text("The group {name} of organization {org}, with {count} member(s).", name=g.name,
                org=g.org_id, count=detail.summary.member_count)  # fmt: skip
    return confirm(request, me, title=Text("Delete this group"), what=what,
                   consequence=Text("Its members stay; only their membership goes."),
                   cancel=f"/ui/admin/groups/{g.id}")  # fmt: skip


@console_page
async def delete_group(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """POST /ui/admin/groups/{id}/delete → ``DeleteGroup``; back to the list."""
    await request.app[CONTAINER].delete_group()(me, path_id(request, "id"))
    return done(request, "/ui/admin/groups", "group_deleted")


async def _member_id(request: web.Request, me: Principal, named: str) -> str:
    """The user a member form names: an email (exactly, among the users the caller may list)
    or an id. ``NotFound`` when no such user is visible."""
    named = named.strip()
    if "@" not in named:
        return named
    page = await request.app[CONTAINER].search_users()(me, email=named, limit=10)
    for user in page.items:
        if user.email == named.lower():
            return user.id
    raise NotFound("user not found")


@console_page
async def add_member(request: web.Request, me: Principal, form: dict[str, str]) -> web.Response:
    """POST /ui/admin/groups/{id}/members ``user`` (email or id) → ``AddMember``."""
    group_id = path_id(request, "id")
    user_id = await _member_id(request, me, form.get("user", ""))
    await request.app[CONTAINER].add_member()(me, group_id, user_id)
    return done(request, f"/ui/admin/groups/{group_id}", "member_added")


@console_page
async def remove_member(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """POST /ui/admin/groups/{id}/members/{user_id}/remove → ``RemoveMember``."""
    group_id = path_id(request, "id")
    await request.app[CONTAINER].remove_member()(me, group_id, path_id(request, "user_id"))
    return done(request, f"/ui/admin/groups/{group_id}", "member_removed")


ROUTES_TABLE: list[tuple[str, str, Any]] = [
    ("GET", "/ui/admin/groups", groups_page),
    ("POST", "/ui/admin/groups", create_group),
    ("GET", "/ui/admin/groups/{id}", group_page),
    ("POST", "/ui/admin/groups/{id}/rename", rename_group),
    ("GET", "/ui/admin/groups/{id}/delete", confirm_delete_group),
    ("POST", "/ui/admin/groups/{id}/delete", delete_group),
    ("POST", "/ui/admin/groups/{id}/members", add_member),
    ("POST", "/ui/admin/groups/{id}/members/{user_id}/remove", remove_member),
]
"""(method, path, handler) of the groups pages."""
