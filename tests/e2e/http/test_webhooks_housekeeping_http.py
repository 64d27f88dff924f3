"""Webhooks over HTTP, issue 44 (docs/reference/webhooks.md; ADR 0053), on SQLite and
PostgreSQL: ``user.deleted`` reaches the endpoints of the deleted user's organization — by an
administrator (``DELETE /users/{id}``), by the user itself (``DELETE /me``) and by SCIM
(``DELETE /scim/v2/Users/{id}``) — verified with ``standardwebhooks``, never another
organization's endpoint, with no secret, hash or token in it; and the delivery log's retention:
tries older than ``webhooks.delivery_retention`` are purged while serving, recent ones stay."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from domain.audit import new_audit_id
from domain.webhooks import WebhookDelivery
from tests.e2e.accounts_world import OTHER, add_user, login
from tests.e2e.helpers import ONE_PER_BACKEND, PASSWORD, MakeClient, bearer, container_of
from tests.e2e.http.test_oauth_http import Machines, machines
from tests.e2e.http.test_scim_http import scim_client
from tests.e2e.webhook_receiver import Receiver, verified

ALLOW = {"AUTHSVC_WEBHOOKS__ALLOW_PRIVATE_TARGETS": "true",
         "AUTHSVC_WEBHOOKS__RETRY_SCHEDULE": "[1]"}  # fmt: skip
HOME = "default"
AUDIT_KEYS = {"id", "type", "occurred_at", "actor_id", "user_id", "org_id", "client_address",
              "user_agent", "details"}  # fmt: skip


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend (RS256)."""
    return request.param  # type: ignore[no-any-return]


async def _endpoint(m: Machines, url: str, org_id: str, types: list[str]) -> dict[str, Any]:
    """An endpoint of ``org_id`` made by the superadmin; its body, with the secret."""
    body = {"url": url, "event_types": types, "org_id": org_id}
    resp = await m.http.post("/webhooks", json=body, headers=bearer(m.root))
    assert resp.status == 201, await resp.text()
    return await resp.json()  # type: ignore[no-any-return]


async def test_user_deleted_reaches_the_webhooks_of_the_users_organization_only(
    make_client: MakeClient,
) -> None:
    home, other = Receiver(), Receiver()
    try:
        m = await machines(make_client, ALLOW)
        mine = await _endpoint(m, await home.start(), HOME, ["user.deleted"])
        theirs = await _endpoint(m, await other.start(), OTHER, ["user.deleted"])
        by_admin = await add_user(m.http, "by-admin@example.com")
        by_self = await add_user(m.http, "self@example.com")
        by_scim = await add_user(m.http, "by-scim@example.com")
        elsewhere = await add_user(m.http, "elsewhere@example.com", org_id=OTHER)
        self_token = (await login(m.http, "self@example.com"))["access_token"]
        scim = await scim_client(m)

        resp = await m.http.delete(f"/users/{by_admin}", headers=bearer(m.admin))
        assert resp.status == 204, await resp.text()
        resp = await m.http.delete("/me", json={"password": PASSWORD}, headers=bearer(self_token))
        assert resp.status == 204, await resp.text()
        await scim.call("DELETE", f"/Users/{by_scim}", status=204)
        got = await home.wait_for(3)

        messages = [verified(mine["secret"], g) for g in got]
        assert sorted(m_["data"]["user_id"] for m_ in messages) == sorted(
            [by_admin, by_self, by_scim]
        )
        for message in messages:
            data = message["data"]
            assert message["type"] == data["type"] == "user.deleted"
            assert set(data) == AUDIT_KEYS and data["org_id"] == HOME and data["details"] == {}
        actors = {m_["data"]["user_id"]: m_["data"]["actor_id"] for m_ in messages}
        assert actors[by_self] == by_self
        assert actors[by_admin] not in (None, by_admin) and actors[by_scim] not in (None, by_scim)
        # The audit rows name the organization too, though the users are gone.
        audit = await m.http.get("/audit-events?type=user.deleted", headers=bearer(m.root))
        rows = {r["user_id"]: r["org_id"] for r in (await audit.json())["items"]}
        assert rows == {by_admin: HOME, by_self: HOME, by_scim: HOME}
        for g in got:  # no secret, hash or token of any kind
            body = g.body.decode()
            for secret in (mine["secret"], theirs["secret"], self_token, scim.token, m.admin,
                           PASSWORD, "$2b$", "password_hash", "whsec_"):  # fmt: skip
                assert secret not in body

        # The other organization's endpoint got none of those: its own deletion only.
        resp = await m.http.delete(f"/users/{elsewhere}", headers=bearer(m.root))
        assert resp.status == 204, await resp.text()
        [only] = await other.wait_for(1)
        assert verified(theirs["secret"], only)["data"]["user_id"] == elsewhere
        assert verified(theirs["secret"], only)["data"]["org_id"] == OTHER
        await asyncio.sleep(1.5)  # a further delivery round sends nothing more to either
        assert len(other.taken) == 1 and len(home.taken) == 3
    finally:
        await home.close()
        await other.close()


async def test_tries_past_the_delivery_retention_are_purged_while_serving(
    make_client: MakeClient,
) -> None:
    receiver = Receiver()
    try:
        m = await machines(make_client, {**ALLOW, "AUTHSVC_STORAGE__PURGE_INTERVAL": "1",
                                         "AUTHSVC_WEBHOOKS__DELIVERY_RETENTION": "86400"})  # fmt: skip
        made = await _endpoint(m, await receiver.start(), HOME, ["group.created"])
        resp = await m.http.post("/groups", json={"name": "ops"}, headers=bearer(m.admin))
        assert resp.status == 201
        await receiver.wait_for(1)  # one real, recent try
        now = datetime.now(UTC)
        old = [now - timedelta(days=2), now - timedelta(days=1, seconds=5)]
        kept = now - timedelta(hours=23)  # inside the day
        tries = [WebhookDelivery(new_audit_id(at), made["id"], f"m-{n}", "group.created", 1, at,
                                 200, None) for n, at in enumerate([*old, kept])]  # fmt: skip
        async with container_of(m.http).storage().begin() as uow:
            for attempt in tries:
                await uow.webhooks.record_delivery(attempt)
            stored = await uow.webhooks.deliveries(made["id"], None, 10)
            await uow.commit()
        assert {t.id for t in tries} <= {d.id for d in stored} and len(stored) == 4
        old_ids = {t.id for t in tries[:2]}

        async def listed() -> set[str]:
            resp = await m.http.get(f"/webhooks/{made['id']}/deliveries", headers=bearer(m.root))
            return {d["id"] for d in (await resp.json())["items"]}

        for _ in range(50):  # the next round of the purge (every 1 s) removes the old ones
            if not old_ids & await listed():
                break
            await asyncio.sleep(0.1)
        remaining = await listed()
        assert remaining == {d.id for d in stored} - old_ids  # the recent two stay
        assert tries[2].id in remaining and len(remaining) == 2
    finally:
        await receiver.close()
