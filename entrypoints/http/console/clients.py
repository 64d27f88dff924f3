"""The admin console's OAuth clients (docs/reference/console.md; the registry of sections 14–15):
list, register (the secret shown once), rotate the secret, disable / enable, edit every field the
JSON API takes (one form for register and edit, ``client_form``: ``skip_consent`` and
``all_organizations`` for a superadmin), delete (after a confirmation page).
Through the JSON API's use cases (``ListClients``, ``GetClient``, ``CreateClient``,
``UpdateClient``, ``RotateClientSecret``, ``DeleteClient``): ``domain.policy`` decides, through
them, which organization's clients the caller manages.

A new secret is shown once: the POST answers 303 (as every hosted-page POST) and hands the
secret to the next page in a cookie sealed for that client (``SecretSealer``, AES-GCM, two
minutes, ``HttpOnly``), which that page reads and clears at once. The secret is never in a URL,
a log or the audit log.
"""

from __future__ import annotations

import base64
from typing import Any

from aiohttp import web

from application.ports import SealedSecretError
from domain.clients import Client
from domain.errors import FieldError, ValidationFailed
from domain.policy import Principal, may_set_first_party_fields
from domain.texts import Text
from entrypoints.http.console import client_form
from entrypoints.http.console.client_form import N_, FormField
from entrypoints.http.console.users import org_filter
from entrypoints.http.console.web import confirm, console_page, done, render
from entrypoints.http.keys import CONTAINER
from entrypoints.http.pages.web import clear_cookie, cookie_name, set_cookie
from entrypoints.http.routing import path_id

__all__ = ["ROUTES_TABLE"]

PAGE_SIZE = 50
_SECRET_COOKIE = "new_secret"  # noqa: S105 - a cookie name
_SECRET_TTL = 120


def _context(client_id: str) -> bytes:
    return f"authsvc console secret {client_id}".encode()


def _hand_secret(request: web.Request, response: web.Response, client_id: str,
                 secret: str) -> None:  # fmt: skip
    sealed = request.app[CONTAINER].secret_sealer().seal(secret.encode(), _context(client_id))
    value = base64.urlsafe_b64encode(sealed).decode().rstrip("=")
    set_cookie(response, request, _SECRET_COOKIE, value, max_age=_SECRET_TTL)


def _take_secret(request: web.Request, client_id: str) -> str | None:
    raw = request.cookies.get(cookie_name(request, _SECRET_COOKIE))
    if not raw or len(raw) > 512:
        return None
    try:
        sealed = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
        return request.app[CONTAINER].secret_sealer().unseal(sealed, _context(client_id)).decode()
    except (SealedSecretError, ValueError):
        return None


def _fields(request: web.Request, me: Principal, *, create: bool) -> tuple[FormField, ...]:
    """The client form's fields for this caller (``client_form.shown``)."""
    return client_form.shown(client_form.FIELDS, create=create,
                             first_party=may_set_first_party_fields(me),
                             any_org=me.is_superadmin)  # fmt: skip


def _form(request: web.Request, fields: tuple[FormField, ...], values: dict[str, Any],
          errors: dict[str, str], action: str, submit: str) -> dict[str, Any]:  # fmt: skip
    """What ``admin/client_form.html`` draws: the fields with their choices resolved (the
    algorithms: ``auth.algorithms``), the values, the errors by field."""
    algorithms = request.app[CONTAINER].auth_settings().current.signing_algorithms
    choices = {f.name: algorithms if f.choices == client_form.SIGNING_ALGORITHMS else f.choices
               for f in fields}  # fmt: skip
    return {"fields": fields, "choices": choices, "values": values, "errors": errors,
            "action": action, "submit": submit}  # fmt: skip


async def _clients_page(request: web.Request, me: Principal, values: dict[str, Any],
                        errors: dict[str, str], status: int = 200) -> web.Response:  # fmt: skip
    page = await request.app[CONTAINER].list_clients()(
        me, limit=PAGE_SIZE, cursor=request.query.get("cursor") or None,
        org_id=org_filter(request),
    )  # fmt: skip
    fields = _fields(request, me, create=True)
    context = {"clients": page.items, "next_cursor": page.next_cursor,
               "org_id": request.query.get("org_id", ""), "presets": client_form.PRESETS,
               "form": _form(request, fields, values, errors, "/ui/admin/clients",
                             N_("Register client"))}  # fmt: skip
    return render(request, me, "admin/clients.html", context, status=status)


@console_page
async def clients_page(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """GET /ui/admin/clients?org_id=&cursor=&preset= → the clients and the registration form,
    filled in with the preset (``client_form.PRESETS``; default ``app``)."""
    preset = request.query.get("preset", client_form.DEFAULT_PRESET)
    values = dict(client_form.PRESETS.get(preset, client_form.PRESETS[client_form.DEFAULT_PRESET]))
    return await _clients_page(request, me, values, {})


@console_page
async def create_client(request: web.Request, me: Principal, form: dict[str, str]) -> web.Response:
    """POST /ui/admin/clients with the fields of ``client_form.FIELDS`` → ``CreateClient``; to
    the client's page, which shows the secret once. A ``ValidationFailed`` draws the form again
    (422) with what was typed and each message by its field."""
    fields = _fields(request, me, create=True)
    try:
        new = await request.app[CONTAINER].create_client()(
            me, **client_form.read(form, fields, create=True)
        )
    except ValidationFailed as e:
        errors = client_form.errors_by_field(e.errors, fields)
        return await _clients_page(request, me, client_form.posted(form, fields), errors, 422)
    response = done(request, f"/ui/admin/clients/{new.client.id}", "client")
    if new.client_secret:
        _hand_secret(request, response, new.client.id, new.client_secret)
    return response


def _client_page(request: web.Request, me: Principal, client: Client, values: dict[str, Any],
                 errors: dict[str, str], secret: str | None = None,
                 status: int = 200) -> web.Response:  # fmt: skip
    fields = _fields(request, me, create=False)
    context = {"client": client, "secret": secret,
               "form": _form(request, fields, values, errors,
                             f"/ui/admin/clients/{client.id}/edit", N_("Save"))}  # fmt: skip
    return render(request, me, "admin/client.html", context, status=status)


@console_page
async def client_page(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """GET /ui/admin/clients/{id} → the client, its new secret once, and its forms."""
    client_id = path_id(request, "id")
    client = await request.app[CONTAINER].get_client()(me, client_id)
    secret = _take_secret(request, client.id)
    response = _client_page(request, me, client, client_form.values(client), {}, secret)
    if request.cookies.get(cookie_name(request, _SECRET_COOKIE)) is not None:
        clear_cookie(response, request, _SECRET_COOKIE)
    return response


@console_page
async def edit(request: web.Request, me: Principal, form: dict[str, str]) -> web.Response:
    """POST /ui/admin/clients/{id}/edit with the edit form's fields → ``GetClient`` (403 /
    404 first), then ``UpdateClient``; a ``ValidationFailed`` draws the page again (422) with
    what was typed and each message by its field."""
    container = request.app[CONTAINER]
    client = await container.get_client()(me, path_id(request, "id"))
    fields = _fields(request, me, create=False)
    try:
        changes = client_form.read(form, fields, create=False)
        await container.update_client()(me, client.id, **changes)
    except ValidationFailed as e:
        errors = client_form.errors_by_field(e.errors, fields)
        return _client_page(request, me, client, client_form.posted(form, fields), errors,
                            status=422)  # fmt: skip
    return done(request, f"/ui/admin/clients/{client.id}", "client_updated")


@console_page
async def rotate(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """POST /ui/admin/clients/{id}/secret → ``RotateClientSecret``; the new secret once."""
    client_id = path_id(request, "id")
    secret = await request.app[CONTAINER].rotate_client_secret()(me, client_id)
    response = done(request, f"/ui/admin/clients/{client_id}", "rotated")
    _hand_secret(request, response, client_id, secret)
    return response


@console_page
async def update(request: web.Request, me: Principal, form: dict[str, str]) -> web.Response:
    """POST /ui/admin/clients/{id}/update ``disabled`` (``true`` | ``false``) →
    ``UpdateClient``."""
    client_id = path_id(request, "id")
    if form.get("disabled") not in ("true", "false"):
        raise ValidationFailed([FieldError("disabled", "must be true or false")])
    await request.app[CONTAINER].update_client()(me, client_id,
                                                 disabled=form["disabled"] == "true")  # fmt: skip
    return done(request, f"/ui/admin/clients/{client_id}", "client_updated")


@console_page
async def confirm_delete(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """GET /ui/admin/clients/{id}/delete → the confirmation page (``GetClient`` first)."""
    client = await request.app[CONTAINER].get_client()(me, path_id(request, "id"))
    what = Text("The client {name} ({id}) of organization {org}.", name=client.name,
                id=client.id, org=client.org_id)  # fmt: skip
    return confirm(request, me, title=Text("Delete this client"), what=what,
                   consequence=Text("Its live tokens stop working at once."),
                   cancel=f"/ui/admin/clients/{client.id}")  # fmt: skip


@console_page
async def delete(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """POST /ui/admin/clients/{id}/delete → ``DeleteClient``; back to the list."""
    await request.app[CONTAINER].delete_client()(me, path_id(request, "id"))
    return done(request, "/ui/admin/clients", "client_deleted")


ROUTES_TABLE: list[tuple[str, str, Any]] = [
    ("GET", "/ui/admin/clients", clients_page),
    ("POST", "/ui/admin/clients", create_client),
    ("GET", "/ui/admin/clients/{id}", client_page),
    ("POST", "/ui/admin/clients/{id}/secret", rotate),
    ("POST", "/ui/admin/clients/{id}/update", update),
    ("POST", "/ui/admin/clients/{id}/edit", edit),
    ("GET", "/ui/admin/clients/{id}/delete", confirm_delete),
    ("POST", "/ui/admin/clients/{id}/delete", delete),
]
"""(method, path, handler) of the clients pages."""
