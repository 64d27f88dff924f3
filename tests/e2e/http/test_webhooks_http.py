"""Webhooks over HTTP (docs/reference/webhooks.md; the Standard Webhooks specification), on
SQLite and PostgreSQL: a receiver verifies every delivery with ``standardwebhooks``; the test
message; a rotated secret (the old one no longer verifies); a receiver that fails then recovers
gets every event with one ``webhook-id`` across the tries; private targets refused at create;
who may manage which endpoints; an organization's events go to its endpoints only; the secret
is shown at create and rotate only."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from standardwebhooks.webhooks import WebhookVerificationError

from domain.model import Role
from tests.e2e.accounts_world import OTHER, ROOT, add_user, login
from tests.e2e.accounts_world import base_env as base_env  # the shared key directory
from tests.e2e.accounts_world import shared_key_dir as shared_key_dir
from tests.e2e.helpers import ONE_PER_BACKEND, MakeClient, assert_problem, bearer
from tests.e2e.webhook_receiver import Receiver, verified

ALLOW = {"AUTHSVC_WEBHOOKS__ALLOW_PRIVATE_TARGETS": "true",
         "AUTHSVC_WEBHOOKS__RETRY_SCHEDULE": "[1]"}  # fmt: skip
TYPES = ["group.created", "group.deleted", "webhook.updated"]


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    made = Receiver()
    yield made
    await made.close()


async def _root(client: TestClient) -> dict[str, str]:
    await add_user(client, ROOT, Role.SUPERADMIN)
    return bearer((await login(client, ROOT))["access_token"])


async def _create(client: TestClient, who: dict[str, str], url: str, **more: Any) -> Any:
    body = {"url": url, "event_types": TYPES, **more}
    resp = await client.post("/webhooks", json=body, headers=who)
    assert resp.status == 201, await resp.text()
    return await resp.json()


async def _group(client: TestClient, who: dict[str, str], name: str, **more: Any) -> str:
    resp = await client.post("/groups", json={"name": name, **more}, headers=who)
    assert resp.status == 201, await resp.text()
    return str((await resp.json())["id"])


async def test_deliveries_verify_with_standardwebhooks_and_rotation_replaces_the_secret(
    make_client: MakeClient, receiver: Receiver
) -> None:
    client = await make_client(ALLOW)
    root = await _root(client)
    made = await _create(client, root, await receiver.start(), description="ops")
    secret = made.pop("secret")
    assert secret.startswith("whsec_")
    assert made["enabled"] is True and made["event_types"] == sorted(TYPES)

    group = await _group(client, root, "ops")
    [got] = await receiver.wait_for(1)
    message = verified(secret, got)
    assert message["type"] == "group.created"
    assert message["data"]["details"] == {"group_id": group}
    assert message["data"]["org_id"] == made["org_id"]
    assert set(message) == {"type", "timestamp", "data"}

    resp = await client.post(f"/webhooks/{made['id']}/test", headers=root)
    assert resp.status == 202
    test_id = (await resp.json())["message_id"]
    [_, got] = await receiver.wait_for(2)
    assert got.headers["webhook-id"] == test_id
    assert verified(secret, got)["type"] == "webhook.test"

    resp = await client.post(f"/webhooks/{made['id']}/secret", headers=root)
    assert resp.status == 200
    new_secret = (await resp.json())["secret"]
    assert new_secret.startswith("whsec_") and new_secret != secret
    await _group(client, root, "later")
    [*_, got] = await receiver.wait_for(3)
    assert verified(new_secret, got)["type"] == "group.created"
    with pytest.raises(WebhookVerificationError):
        verified(secret, got)

    # The secret is never shown again; the deliveries list every try.
    for path in (f"/webhooks/{made['id']}", "/webhooks"):
        text = await (await client.get(path, headers=root)).text()
        assert secret not in text and new_secret not in text and "secret" not in text
    resp = await client.get(f"/webhooks/{made['id']}/deliveries", headers=root)
    items = (await resp.json())["items"]
    assert [(d["status_code"], d["delivered"]) for d in items] == [(204, True)] * 3
    assert {d["message_id"] for d in items} == {g.headers["webhook-id"] for g in receiver.taken}
    # An unsubscribed type is not sent; a disabled endpoint gets nothing.
    resp = await client.patch(f"/webhooks/{made['id']}", json={"enabled": False}, headers=root)
    assert resp.status == 200 and (await resp.json())["enabled"] is False
    await _group(client, root, "unsent")
    for kind in ("webhook.created", "webhook.secret_rotated", "webhook.updated"):
        audit = await client.get(f"/audit-events?type={kind}", headers=root)
        [row] = (await audit.json())["items"]
        assert row["details"]["webhook_id"] == made["id"]
    audit_text = await (await client.get("/audit-events", headers=root)).text()
    assert secret not in audit_text and new_secret not in audit_text
    assert len(receiver.taken) == 3


async def test_a_receiver_that_fails_then_recovers_gets_every_event(
    make_client: MakeClient,
) -> None:
    receiver = Receiver(fail_first=3)
    try:
        client = await make_client(ALLOW)
        root = await _root(client)
        made = await _create(client, root, await receiver.start())
        for name in ("a", "b"):
            await _group(client, root, name)
        taken = await receiver.wait_for(2, timeout=30)
        messages = [verified(made["secret"], got) for got in taken]
        assert sorted(m["data"]["type"] for m in messages) == ["group.created"] * 2
        ids = {got.headers["webhook-id"] for got in taken}
        assert len(ids) == 2
        assert {r.headers["webhook-id"] for r in receiver.refused} <= ids
        resp = await client.get(f"/webhooks/{made['id']}/deliveries", headers=root)
        codes = sorted(d["status_code"] for d in (await resp.json())["items"])
        assert codes == [204, 204, 503, 503, 503]
        hook = await (await client.get(f"/webhooks/{made['id']}", headers=root)).json()
        assert hook["failing_since"] is None and hook["enabled"] is True
    finally:
        await receiver.close()


@pytest.mark.parametrize(
    "url",
    ["https://127.0.0.1/hook", "https://10.1.2.3/hook", "https://[::1]/hook",
     "https://169.254.169.254/latest", "https://localhost/hook", "http://example.com/hook",
     "ftp://example.com/hook", "https://user@example.com/hook", "not a url"],
)  # fmt: skip
async def test_private_and_plain_http_targets_are_refused_at_create(
    make_client: MakeClient, url: str
) -> None:
    client = await make_client()
    root = await _root(client)
    resp = await client.post("/webhooks", json={"url": url, "event_types": TYPES}, headers=root)
    body = await assert_problem(resp, 422, "validation_error")
    assert "url" in str(body)
    resp = await client.get("/webhooks", headers=root)
    assert (await resp.json())["items"] == []


async def test_bad_event_types_and_patch_members_are_refused(make_client: MakeClient) -> None:
    client = await make_client()
    root = await _root(client)
    for types in ([], ["no.such_type"], "group.created", [1]):
        body = {"url": "https://hooks.example.com/x", "event_types": types}
        resp = await client.post("/webhooks", json=body, headers=root)
        assert resp.status == 422, types
    made = await _create(client, root, "https://hooks.example.com/x")
    for patch in ({"secret": "whsec_x"}, {"org_id": "other"}, {"enabled": "yes"}, {}):
        resp = await client.patch(f"/webhooks/{made['id']}", json=patch, headers=root)
        await assert_problem(resp, 422, "validation_error")


async def test_org_admins_manage_their_organization_only(
    make_client: MakeClient, receiver: Receiver
) -> None:
    client = await make_client(ALLOW)
    root = await _root(client)
    url = await receiver.start()
    await add_user(client, "admin@example.com", Role.ORG_ADMIN)
    await add_user(client, "other-admin@example.com", Role.ORG_ADMIN, OTHER)
    await add_user(client, "viewer@example.com")
    admin = bearer((await login(client, "admin@example.com"))["access_token"])
    other = bearer((await login(client, "other-admin@example.com"))["access_token"])
    viewer = bearer((await login(client, "viewer@example.com"))["access_token"])

    mine = await _create(client, admin, url)
    theirs = await _create(client, root, url, org_id=OTHER)
    assert theirs["org_id"] == OTHER
    resp = await client.post("/webhooks", json={"url": url, "event_types": TYPES}, headers=viewer)
    await assert_problem(resp, 403, "forbidden")
    body = {"url": url, "event_types": TYPES, "org_id": OTHER}
    await assert_problem(await client.post("/webhooks", json=body, headers=admin), 404, "not_found")
    for method, path in (("GET", ""), ("PATCH", ""), ("DELETE", ""), ("POST", "/secret"),
                         ("POST", "/test"), ("GET", "/deliveries")):  # fmt: skip
        target = f"/webhooks/{theirs['id']}{path}"
        resp = await client.request(method, target, json={"enabled": False}, headers=admin)
        await assert_problem(resp, 404, "not_found")
        resp = await client.request(method, target, json={"enabled": False}, headers=viewer)
        await assert_problem(resp, 403, "forbidden")
    listed = await (await client.get("/webhooks", headers=admin)).json()
    assert [w["id"] for w in listed["items"]] == [mine["id"]]
    await assert_problem(
        await client.get(f"/webhooks?org_id={OTHER}", headers=admin), 404, "not_found"
    )
    everyone = await (await client.get("/webhooks", headers=root)).json()
    assert len(everyone["items"]) == 2

    # An event of OTHER goes to OTHER's endpoint only.
    await _group(client, other, "theirs")
    [got] = await receiver.wait_for(1)
    assert verified(theirs["secret"], got)["data"]["org_id"] == OTHER
    with pytest.raises(WebhookVerificationError):
        verified(mine["secret"], got)
    resp = await client.delete(f"/webhooks/{mine['id']}", headers=admin)
    assert resp.status == 204
    await assert_problem(
        await client.get(f"/webhooks/{mine['id']}", headers=admin), 404, "not_found"
    )
    audit = await (await client.get("/audit-events?type=webhook.deleted", headers=root)).json()
    assert [e["details"] for e in audit["items"]] == [{"webhook_id": mine["id"]}]
