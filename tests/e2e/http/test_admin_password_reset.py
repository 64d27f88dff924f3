"""POST /users/{id}/password-reset and the console's "Send a password-reset link" button
(docs/reference/accounts.md, docs/reference/console.md, ADR 0046) over HTTP, on SQLite and
PostgreSQL: an org_admin mails a user of its organization a reset link that works, a superadmin
any user; every refusal (another organization's user 404, a missing one 404, viewer and
operator 403, an org_admin on a superadmin 403, no token 401, a disabled user 409) changes
nothing — no token stored, no mail, no audit row — and the throttle of /password/forgot
applies (429).

The world is ``tests.e2e.accounts_world``'s; mail goes to the ``console`` backend (the log),
where the link is read back.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from tests.e2e.accounts_world import HOME, MISSING_ID, World, log_in_as, make_world, snapshot
from tests.e2e.accounts_world import base_env as base_env  # the shared key directory
from tests.e2e.accounts_world import deployment as deployment  # SQLite and PostgreSQL
from tests.e2e.accounts_world import shared_key_dir as shared_key_dir
from tests.e2e.helpers import PASSWORD, MakeClient, bearer
from tests.e2e.oidc_helpers import ORIGIN, csrf_of, sign_in

LINK_TOKEN = re.compile(r"/ui/reset\?token=([A-Za-z0-9_-]+)")
NEW_PASSWORD = "a brand new passphrase 42"


def reset_links(caplog: pytest.LogCaptureFixture, email: str) -> list[str]:
    """The reset tokens the console mail backend logged for ``email``, oldest first."""
    return [m.group(1) for r in caplog.records
            if r.name == "authsvc.email" and email in r.getMessage()
            and (m := LINK_TOKEN.search(r.getMessage()))]  # fmt: skip


async def wait_for_links(caplog: pytest.LogCaptureFixture, email: str, count: int) -> list[str]:
    deadline = time.monotonic() + 10
    while len(found := reset_links(caplog, email)) < count and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return found


async def send(client: TestClient, token: str | None, user_id: str) -> Any:
    headers = {} if token is None else bearer(token)
    return await client.post(f"/users/{user_id}/password-reset", headers=headers)


async def reset_rows(world: World) -> list[dict[str, Any]]:
    """The audit log's ``password.reset_requested`` rows (superadmin's view: every org)."""
    resp = await world.client.get("/audit-events?type=password.reset_requested&limit=200",
                                  headers=bearer(world.tokens["superadmin"]))  # fmt: skip
    assert resp.status == 200, await resp.text()
    return (await resp.json())["items"]  # type: ignore[no-any-return]


@pytest.fixture
async def world(client: TestClient) -> World:
    return await make_world(client)


async def test_an_org_admin_mails_a_link_that_resets_the_password(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="authsvc.email")
    token = await log_in_as(world, "org_admin")
    target = world.orgs["same"].target
    resp = await send(world.client, token, target)
    assert resp.status == 202 and await resp.read() == b""
    [link] = await wait_for_links(caplog, f"target@{HOME}.example", 1)
    rows = await reset_rows(world)
    assert [(r["actor_id"], r["user_id"], r["org_id"]) for r in rows] == [
        (world.user_ids["org_admin"], target, HOME)]  # fmt: skip
    assert link not in str(rows)  # never the token in the audit log
    resp = await world.client.post("/password/reset",
                                   json={"token": link, "new_password": NEW_PASSWORD})  # fmt: skip
    assert resp.status == 204, await resp.text()
    resp = await world.client.post("/login", json={"email": f"target@{HOME}.example",
                                                   "password": NEW_PASSWORD})  # fmt: skip
    assert resp.status == 200


async def test_a_superadmin_mails_a_user_of_any_org_and_a_newer_link_voids_the_older(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="authsvc.email")
    other = world.orgs["other"].target
    for _ in range(2):
        assert (await send(world.client, world.tokens["superadmin"], other)).status == 202
    first, second = await wait_for_links(caplog, "target@acme.example", 2)
    body = {"new_password": NEW_PASSWORD}
    resp = await world.client.post("/password/reset", json={"token": first, **body})
    assert resp.status == 400  # voided by the newer one, as for /password/forgot
    resp = await world.client.post("/password/reset", json={"token": second, **body})
    assert resp.status == 204


@pytest.mark.parametrize(
    ("role", "org", "status"),
    [("org_admin", "other", 404), ("org_admin", "missing", 404), ("org_admin", "root", 403),
     ("viewer", "same", 403), ("operator", "same", 403), (None, "same", 401)],
)  # fmt: skip
async def test_refusals_change_nothing(
    world: World, caplog: pytest.LogCaptureFixture, role: str | None, org: str, status: int
) -> None:
    """Each refusal has its status and problem code; no user, session, token, mail or audit
    row changes (``snapshot`` and the audit log before and after)."""
    caplog.set_level(logging.INFO, logger="authsvc.email")
    token = None if role is None else await log_in_as(world, role)
    target = {"other": world.orgs["other"].target, "missing": MISSING_ID,
              "root": world.user_ids["superadmin"],
              "same": world.orgs["same"].target}[org]  # fmt: skip
    before = await snapshot(world)
    resp = await send(world.client, token, target)
    assert resp.status == status, await resp.text()
    assert resp.content_type == "application/problem+json"
    code = {401: "invalid_token", 403: "forbidden", 404: "not_found"}[status]
    assert (await resp.json())["code"] == code
    await asyncio.sleep(0.1)  # a message would be posted right after the answer
    assert await snapshot(world) == before
    assert await reset_rows(world) == []
    assert [r for r in caplog.records if LINK_TOKEN.search(r.getMessage())] == []  # no mail


async def test_a_disabled_user_is_409_and_the_forgot_throttle_applies(
    make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="authsvc.email")
    client = await make_client({"AUTHSVC_AUTH__LOGIN_MAX_FAILURES": "2"})
    world = await make_world(client)
    token = await log_in_as(world, "org_admin")
    same = world.orgs["same"]
    resp = await client.patch(f"/users/{same.member}", json={"disabled": True},
                              headers=bearer(token))  # fmt: skip
    assert resp.status == 200
    resp = await send(client, token, same.member)
    assert resp.status == 409 and (await resp.json())["code"] == "conflict"
    # the throttle key of /password/forgot for that email: two sends, then 429 for both ways in
    assert [(await send(client, token, same.target)).status for _ in range(3)] == [202, 202, 429]
    resp = await client.post("/password/forgot", json={"email": f"target@{HOME}.example"})
    assert resp.status == 429
    assert len(await wait_for_links(caplog, f"target@{HOME}.example", 2)) == 2
    assert len(await reset_rows(world)) == 2


async def test_the_console_button_sends_the_link_and_refuses_another_org(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    """POST /ui/admin/users/{id}/password-reset (CSRF-checked) → 303 ``done=reset_sent``; the
    same use case: another organization's user is the 404 page, nothing sent."""
    caplog.set_level(logging.INFO, logger="authsvc.email")
    await log_in_as(world, "org_admin")
    client = world.client
    client.session.cookie_jar.clear()
    assert await sign_in(client, "/ui/admin", f"org_admin@{HOME}.example", PASSWORD) == "/ui/admin"
    same, other = world.orgs["same"].target, world.orgs["other"].target
    page = await (await client.get(f"/ui/admin/users/{same}")).text()
    assert f'action="/ui/admin/users/{same}/password-reset"' in page
    resp = await client.post(f"/ui/admin/users/{other}/password-reset",
                             data={"csrf_token": csrf_of(client)}, headers=ORIGIN,
                             allow_redirects=False)  # fmt: skip
    assert resp.status == 404 and resp.content_type == "text/html"
    resp = await client.post(f"/ui/admin/users/{same}/password-reset", headers=ORIGIN,
                             allow_redirects=False)  # fmt: skip
    assert resp.status == 403  # no CSRF token
    assert await reset_rows(world) == []
    resp = await client.post(f"/ui/admin/users/{same}/password-reset",
                             data={"csrf_token": csrf_of(client)}, headers=ORIGIN,
                             allow_redirects=False)  # fmt: skip
    assert resp.status == 303
    assert resp.headers["Location"] == f"/ui/admin/users/{same}?done=reset_sent"
    assert len(await wait_for_links(caplog, f"target@{HOME}.example", 1)) == 1
    assert [r["user_id"] for r in await reset_rows(world)] == [same]
