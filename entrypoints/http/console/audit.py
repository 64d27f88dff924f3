"""The admin console's dashboard and audit log (docs/reference/console.md).

The dashboard is ``application.console.dashboard.Dashboard`` (logins and failed logins per hour
over the last 24 h, live sessions, users; the signing keys for a superadmin). The audit log is
``ListAuditEvents`` — the use case of GET /audit-events, so the same scope (org_admin: its
organization) — with the filters ``type``, ``user_id`` and a date range (``from`` / ``to``,
``YYYY-MM-DD`` UTC days, both included), a page at a time — each row naming its actor and
user by email (``AuditPeople``; an id the caller may not see, or of a deleted user, stays an
id) — or all of it as CSV: a header row of
the AuditEvent fields of docs/reference/operations.md, then one row per event (``details`` as JSON;
a cell that a spreadsheet would read as a formula is prefixed with ``'``, OWASP CSV injection).
"""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from aiohttp import web

from domain.audit import AUDIT_EVENT_TYPES, AuditEvent
from domain.errors import FieldError, ValidationFailed
from domain.policy import Principal
from entrypoints.http.console.users import org_filter
from entrypoints.http.console.web import console_page, render
from entrypoints.http.keys import CONTAINER
from entrypoints.http.pages.web import PAGE_HEADERS
from entrypoints.http.views import audit_event_json

__all__ = ["CSV_FIELDS", "ROUTES_TABLE"]

PAGE_SIZE = 50
CSV_FIELDS = ("id", "type", "occurred_at", "actor_id", "user_id", "org_id", "client_address",
              "user_agent", "details")  # fmt: skip
"""The AuditEvent fields of docs/reference/operations.md, in its order: the CSV's header row."""
MAX_CSV_ROWS = 100_000
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


@console_page
async def dashboard(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """GET /ui/admin[?org_id=] → the dashboard."""
    view = await request.app[CONTAINER].dashboard()(me, org_id=org_filter(request))
    peak = max([1, *(h.logins for h in view.hours), *(h.failures for h in view.hours)])
    context = {"view": view, "peak": peak, "org_id": request.query.get("org_id", "")}
    return render(request, me, "admin/dashboard.html", context)


def _day(name: str, value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.combine(date.fromisoformat(value), time(0), tzinfo=UTC)
    except ValueError:
        raise ValidationFailed([FieldError(name, "must be a date, YYYY-MM-DD")]) from None


def _filters(request: web.Request) -> tuple[dict[str, Any], datetime | None]:
    """The use case's filters from the query, and the exclusive end of the ``to`` day."""
    since = _day("from", request.query.get("from"))
    until = _day("to", request.query.get("to"))
    params: dict[str, Any] = {
        "org_id": org_filter(request),
        "user_id": request.query.get("user_id") or None,
        "event_type": request.query.get("type") or None,
        "since": None if since is None else since.isoformat(),
    }
    return params, None if until is None else until + timedelta(days=1)


async def _events(request: web.Request, me: Principal, cursor: str | None,
                  limit: int) -> tuple[list[AuditEvent], str | None]:  # fmt: skip
    """Up to ``limit`` matching events from ``cursor``, those after the ``to`` day skipped
    (pages are newest first), and the cursor to go on from."""
    params, until = _filters(request)
    listing = request.app[CONTAINER].list_audit_events()
    found: list[AuditEvent] = []
    while len(found) < limit:
        page = await listing(me, limit=min(200, limit - len(found)), cursor=cursor, **params)
        found += [e for e in page.items if until is None or e.occurred_at < until]
        cursor = page.next_cursor
        if cursor is None:
            break
    return found, cursor


@console_page
async def audit_page(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """GET /ui/admin/audit?type&user_id&from&to&org_id&cursor → a page of the audit log."""
    events, cursor = await _events(request, me, request.query.get("cursor") or None, PAGE_SIZE)
    query = {k: request.query.get(k, "") for k in ("type", "user_id", "from", "to", "org_id")}
    emails = await request.app[CONTAINER].audit_people()(
        me, [i for e in events for i in (e.actor_id, e.user_id)]
    )
    context = {"events": [audit_event_json(e) for e in events], "next_cursor": cursor,
               "types": sorted(AUDIT_EVENT_TYPES), "q": query, "emails": emails}  # fmt: skip
    return render(request, me, "admin/audit.html", context)


def _cell(value: Any) -> str:
    text = "" if value is None else value if isinstance(value, str) else json.dumps(value)
    return "'" + text if text.startswith(_FORMULA) else text


@console_page
async def audit_csv(request: web.Request, me: Principal, _: dict[str, str]) -> web.Response:
    """GET /ui/admin/audit.csv?type&user_id&from&to&org_id → every matching event (up to
    ``MAX_CSV_ROWS``) as ``text/csv``, newest first."""
    events, _cursor = await _events(request, me, None, MAX_CSV_ROWS)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_FIELDS)
    for event in events:
        row = audit_event_json(event)
        writer.writerow([_cell(row[f]) for f in CSV_FIELDS])
    headers = {**PAGE_HEADERS,
               "Content-Disposition": 'attachment; filename="audit-events.csv"'}  # fmt: skip
    return web.Response(text=out.getvalue(), content_type="text/csv", charset="utf-8",
                        headers=headers)  # fmt: skip


ROUTES_TABLE: list[tuple[str, str, Any]] = [
    ("GET", "/ui/admin", dashboard),
    ("GET", "/ui/admin/audit", audit_page),
    ("GET", "/ui/admin/audit.csv", audit_csv),
]
"""(method, path, handler) of the dashboard and audit pages."""
