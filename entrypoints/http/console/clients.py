"""The admin console's OAuth clients (docs/reference/console.md; the registry of sections 14–15):
list, register (the secret shown once), rotate the secret, disable / enable, edit the redirect URIs
and (a superadmin) ``skip_consent`` and ``all_organizations``, delete (after a confirmation page).
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
from domain.errors import FieldError, ValidationFailed
from domain.policy import FIRST_PARTY_FIELDS, Principal, may_set_first_party_fields
from entrypoints.http.console.users import org_filter
from entrypoints.http.console.web import confirm, console_page, done, render
from entrypoints.http.keys import CONTAINER
from entrypoints.http.pages.web import clear_cookie, cookie_name, set_cookie
from entrypoints.http.routing import path_id

__all__ = ["ROUTES_TABLE"]

PAGE_SIZE = 50
GRANTS = ("client_credentials", "authorization_code", "refresh_token")
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


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _checkbox(form: dict[str, str], name: str) -> bool:
    return form.get(name) == "on"


def _first_party(form: dict[str, str], always: bool) -> dict[str, bool]:
    """The ``FIRST_PARTY_FIELDS`` a form sets: each checked box, and every one (checked or not)
    when ``always`` (the form showed them). ``UpdateClient`` / ``CreateClient`` refuse them
    from an org_admin (403)."""
    if always or any(_checkbox(form, f) for f in FIRST_PARTY_FIELDS):
        return {f: _checkbox(form, f) for f in FIRST_PARTY_FIELDS}
    return {}


@console_page
async def clients_page(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """GET /ui/admin/clients?org_id=&cursor= → the clients and the registration form."""
    page = await request.app[CONTAINER].list_clients()(
        me, limit=PAGE_SIZE, cursor=request.query.get("cursor") or None,
        org_id=org_filter(request),
    )  # fmt: skip
    context = {"clients": page.items, "next_cursor": page.next_cursor, "grants": GRANTS,
               "org_id": request.query.get("org_id", ""),
               "first_party": may_set_first_party_fields(me)}  # fmt: skip
    return render(request, me, "admin/clients.html", context)


@console_page
async def create_client(request: web.Request, me: Principal, form: dict[str, str]) -> web.Response:
    """POST /ui/admin/clients ``name``, ``scopes`` (space-separated), ``grant_<type>``,
    ``redirect_uris`` (one a line), ``skip_consent``, ``all_organizations``, ``public``,
    [``org_id``] →
    ``CreateClient``; to the client's page, which shows the secret once."""
    grants = [g for g in GRANTS if _checkbox(form, f"grant_{g}")]
    code_flow: dict[str, Any] = {"grant_types": grants or None}
    if uris := _lines(form.get("redirect_uris", "")):
        code_flow["redirect_uris"] = uris
    code_flow.update({k: True for k, v in _first_party(form, False).items() if v})
    new = await request.app[CONTAINER].create_client()(
        me, form.get("name", ""), form.get("scopes", "").split(),
        org_id=form.get("org_id") or None, public=_checkbox(form, "public"), **code_flow,
    )  # fmt: skip
    response = done(request, f"/ui/admin/clients/{new.client.id}", "client")
    if new.client_secret:
        _hand_secret(request, response, new.client.id, new.client_secret)
    return response


@console_page
async def client_page(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """GET /ui/admin/clients/{id} → the client, its new secret once, and its forms."""
    client_id = path_id(request, "id")
    client = await request.app[CONTAINER].get_client()(me, client_id)
    secret = _take_secret(request, client.id)
    context = {"client": client, "secret": secret, "first_party": may_set_first_party_fields(me)}
    response = render(request, me, "admin/client.html", context)
    if request.cookies.get(cookie_name(request, _SECRET_COOKIE)) is not None:
        clear_cookie(response, request, _SECRET_COOKIE)
    return response


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
    """POST /ui/admin/clients/{id}/update with one of ``disabled`` (``true`` | ``false``),
    ``redirect_uris`` (one a line) [+ ``first_party``, ``skip_consent``,
    ``all_organizations``], ``backchannel_logout_uri`` [+ ``backchannel_logout_session_required``]
    (an empty URI keeps the one set) → ``UpdateClient``."""
    client_id = path_id(request, "id")
    changes: dict[str, Any] = {}
    if "disabled" in form:
        if form["disabled"] not in ("true", "false"):
            raise ValidationFailed([FieldError("disabled", "must be true or false")])
        changes["disabled"] = form["disabled"] == "true"
    if "redirect_uris" in form:
        changes["redirect_uris"] = _lines(form["redirect_uris"])
        changes.update(_first_party(form, "first_party" in form))
    if "backchannel_logout_uri" in form:  # the back-channel logout form
        changes["backchannel_logout_uri"] = form["backchannel_logout_uri"].strip() or None
        changes["backchannel_logout_session_required"] = _checkbox(
            form, "backchannel_logout_session_required"
        )
    await request.app[CONTAINER].update_client()(me, client_id, **changes)
    return done(request, f"/ui/admin/clients/{client_id}", "client_updated")


@console_page
async def confirm_delete(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """GET /ui/admin/clients/{id}/delete → the confirmation page (``GetClient`` first)."""
    client = await request.app[CONTAINER].get_client()(me, path_id(request, "id"))
    return confirm(request, me, title="Delete this client", what=f"The client {client.name} "
                   f"({client.id}) of organization {client.org_id}.",
                   consequence="Its live tokens stop working at once.",
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
    ("GET", "/ui/admin/clients/{id}/delete", confirm_delete),
    ("POST", "/ui/admin/clients/{id}/delete", delete),
]
"""(method, path, handler) of the clients pages."""
