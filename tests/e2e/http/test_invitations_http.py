"""Invitations over HTTP (docs/reference/invitations.md), on SQLite and PostgreSQL: an org_admin
invites into its organization with a role and groups, the mail carries the link (never the
answer), the invitee sets a password on /ui/invitation and lands signed in; the account has the
role, organization and groups (/me) — or signs in with another provider (the real
oidc-provider), which creates the account with the identity linked; the refusals (role, scope, escalation, foreign groups,
existing accounts) change nothing; a resent link voids the old one; a revoked, expired or used
link creates nothing; the audit log records each step without the token."""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from application.shared.steps import hash_token
from tests.e2e.accounts_world import (
    HOME,
    OTHER,
    World,
    log_in_as,
    login,
    make_world,
    snapshot,
)
from tests.e2e.accounts_world import base_env as base_env  # one key directory per module
from tests.e2e.accounts_world import deployment as deployment  # once per storage backend
from tests.e2e.accounts_world import shared_key_dir as shared_key_dir
from tests.e2e.federation_helpers import callback, provider_toml, upstream, upstream_login
from tests.e2e.helpers import MakeClient, assert_problem, bearer, container_of
from tests.e2e.oidc_helpers import ISSUER, ORIGIN, csrf_of
from tests.smtp import SmtpSink, smtp_env, smtp_server, text_of, token_of

__all__ = ["smtp_server", "upstream"]  # the fixtures, for pytest

NEW = "new.person@example.com"
NEW_PASSWORD = "a long enough passphrase"
FIELDS = {"id", "org_id", "email", "role", "group_ids", "invited_by", "created_at",
          "expires_at", "status"}  # fmt: skip


@pytest.fixture
async def mail(
    make_client: MakeClient, smtp_server: tuple[SmtpSink, int]
) -> tuple[TestClient, SmtpSink, World]:
    """An app mailing through the test SMTP server, its sink and the accounts world."""
    sink, port = smtp_server
    client = await make_client(smtp_env(port))
    return client, sink, await make_world(client)


async def _invite(client: TestClient, token: str, **body: Any) -> Any:
    return await client.post("/invitations", json=body, headers=bearer(token))


async def _accept(client: TestClient, link_token: str, password: str = NEW_PASSWORD) -> Any:
    """Open the invitation page (which sets the CSRF cookie) and post the password twice."""
    page = await client.get("/ui/invitation", params={"token": link_token})
    form = {"token": link_token, "password": password, "password_again": password,
            "csrf_token": csrf_of(client)}  # fmt: skip
    posted = await client.post("/ui/invitation", data=form, headers=ORIGIN,
                               allow_redirects=False)  # fmt: skip
    return page, posted


async def test_an_invitation_from_the_api_to_a_signed_in_account_in_the_org(
    mail: tuple[TestClient, SmtpSink, World],
) -> None:
    client, sink, world = mail
    admin = await log_in_as(world, "org_admin")
    group = world.orgs["same"].group
    resp = await _invite(client, admin, email="New.Person@Example.com", role="operator",
                         group_ids=[group, group])  # fmt: skip
    assert resp.status == 201, await resp.text()
    body = await resp.json()
    assert set(body) == FIELDS  # no token, no hash
    assert (body["email"], body["role"], body["org_id"], body["group_ids"], body["status"]) == (
        NEW, "operator", HOME, [group], "pending")  # fmt: skip
    assert body["invited_by"] == world.user_ids["org_admin"]

    message = await sink.wait_for(NEW)
    link_token = token_of(message)
    assert f"{ISSUER}/ui/invitation?token={link_token}" in text_of(message)
    assert len(link_token) >= 43  # 256 bits
    assert link_token not in await resp.text()

    page, posted = await _accept(client, link_token)
    assert page.status == 200 and NEW in await page.text() and HOME in await page.text()
    assert posted.status == 303 and posted.headers["Location"] == "/ui/account"
    account = await client.get("/ui/account", allow_redirects=False)
    assert account.status == 200 and NEW in await account.text()

    tokens = await login(client, NEW, NEW_PASSWORD)
    me = await (await client.get("/me", headers=bearer(tokens["access_token"]))).json()
    assert (me["email"], me["role"], me["org_id"], me["groups"], me["email_verified"]) == (
        NEW, "operator", HOME, [group], True)  # fmt: skip

    listed = await (await client.get("/invitations", headers=bearer(admin))).json()
    assert [(i["id"], i["status"]) for i in listed["items"]] == [(body["id"], "accepted")]
    # The link is spent: a second acceptance creates nothing.
    page, posted = await _accept(client, link_token, "another passphrase")
    assert page.status == 400 and posted.status == 400

    audit = await (await client.get("/audit-events", headers=bearer(admin), params={
        "limit": "50"})).json()  # fmt: skip
    types = [e["type"] for e in audit["items"]]
    for kind in ("invitation.created", "invitation.accepted", "user.registered",
                 "group.member_added"):  # fmt: skip
        assert kind in types
    everything = str(audit)
    assert link_token not in everything and hash_token(link_token) not in everything


async def test_refusals_change_nothing_and_send_nothing(
    mail: tuple[TestClient, SmtpSink, World],
) -> None:
    client, sink, world = mail
    admin = await log_in_as(world, "org_admin")
    viewer, operator = await log_in_as(world, "viewer"), await log_in_as(world, "operator")
    before = await snapshot(world)
    cases = [
        (viewer, {"email": NEW, "role": "viewer"}, 403, "forbidden"),
        (operator, {"email": NEW, "role": "viewer"}, 403, "forbidden"),
        (admin, {"email": NEW, "role": "superadmin"}, 403, "forbidden"),
        (admin, {"email": NEW, "role": "viewer", "org_id": OTHER}, 404, "not_found"),
        (admin, {"email": NEW, "role": "viewer", "group_ids": [world.orgs["other"].group]},
         422, "validation_error"),
        (admin, {"email": NEW, "role": "viewer", "group_ids": "abc"}, 422, "validation_error"),
        (admin, {"email": "not an email", "role": "viewer"}, 422, "validation_error"),
        (admin, {"email": NEW, "role": "king"}, 422, "validation_error"),
        (admin, {"email": "target@acme.example", "role": "viewer"}, 409, "email_taken"),
    ]  # fmt: skip
    for token, body, status, code in cases:
        await assert_problem(await _invite(client, token, **body), status, code)
    resp = await client.post("/invitations", json={"email": NEW, "role": "viewer"})
    await assert_problem(resp, 401, "invalid_token")
    listed = await (await client.get("/invitations", headers=bearer(admin))).json()
    assert listed["items"] == []
    assert await snapshot(world) == before
    await asyncio.sleep(0.2)
    assert sink.to(NEW) == []
    # A superadmin invites into any organization, with any role.
    root = world.tokens["superadmin"]
    resp = await _invite(client, root, email=NEW, role="superadmin", org_id=OTHER,
                         group_ids=[world.orgs["other"].group])  # fmt: skip
    assert resp.status == 201
    invitation = await resp.json()
    # ... which an org_admin of that organization may neither see nor manage: not its org.
    await assert_problem(await client.delete(f"/invitations/{invitation['id']}",
                                             headers=bearer(admin)), 404, "not_found")  # fmt: skip
    await assert_problem(await _invite(client, root, email=NEW, role="viewer", org_id=OTHER),
                         409, "conflict")  # fmt: skip
    others = await (await client.get("/invitations", headers=bearer(root),
                                     params={"org_id": OTHER})).json()  # fmt: skip
    assert [i["id"] for i in others["items"]] == [invitation["id"]]
    await assert_problem(await client.get("/invitations", headers=bearer(admin),
                                          params={"org_id": OTHER}), 404, "not_found")  # fmt: skip


async def test_resend_voids_the_old_link_and_revoke_voids_the_new_one(
    mail: tuple[TestClient, SmtpSink, World],
) -> None:
    client, sink, world = mail
    admin = await log_in_as(world, "org_admin")
    created = await (await _invite(client, admin, email=NEW, role="viewer")).json()
    first = token_of(await sink.wait_for(NEW))
    resp = await client.post(f"/invitations/{created['id']}/resend", headers=bearer(admin))
    assert resp.status == 200
    second = token_of(await sink.wait_for(NEW, 2))
    assert second != first
    page, posted = await _accept(client, first)
    assert (page.status, posted.status) == (400, 400)
    assert (await client.delete(f"/invitations/{created['id']}", headers=bearer(admin))).status \
        == 204  # fmt: skip
    assert (await client.delete(f"/invitations/{created['id']}", headers=bearer(admin))).status \
        == 204  # idempotent  # fmt: skip
    page, posted = await _accept(client, second)
    assert (page.status, posted.status) == (400, 400)
    assert "invalid, expired, revoked or used" in await page.text()
    await assert_problem(await client.post(f"/invitations/{created['id']}/resend",
                                           headers=bearer(admin)), 409, "conflict")  # fmt: skip
    await assert_problem(await client.post(f"/invitations/{'0' * 32}/resend",
                                           headers=bearer(admin)), 404, "not_found")  # fmt: skip
    await assert_problem(await client.delete("/invitations/odd%00id", headers=bearer(admin)),
                         404, "not_found")  # fmt: skip
    listed = await (await client.get("/invitations", headers=bearer(admin))).json()
    assert [i["status"] for i in listed["items"]] == ["revoked"]
    resp = await client.get("/users", headers=bearer(admin), params={"limit": "200"})
    assert NEW not in await resp.text()


async def test_an_expired_link_creates_nothing_and_a_resend_revives_it(
    mail: tuple[TestClient, SmtpSink, World],
) -> None:
    client, sink, world = mail
    admin = await log_in_as(world, "org_admin")
    created = await (await _invite(client, admin, email=NEW, role="viewer")).json()
    link = token_of(await sink.wait_for(NEW))
    async with container_of(client).storage().begin() as uow:  # the week passes
        found = await uow.invitations.get(created["id"])
        assert found is not None
        await uow.invitations.renew(found.id, found.token_hash,
                                    found.created_at - timedelta(seconds=1),
                                    found.invited_by)  # fmt: skip
        await uow.commit()
    page, posted = await _accept(client, link)
    assert (page.status, posted.status) == (400, 400)
    listed = await (await client.get("/invitations", headers=bearer(admin))).json()
    assert [i["status"] for i in listed["items"]] == ["expired"]
    resp = await client.post(f"/invitations/{created['id']}/resend", headers=bearer(admin))
    assert (await resp.json())["status"] == "pending"
    page, posted = await _accept(client, token_of(await sink.wait_for(NEW, 2)))
    assert posted.status == 303


async def test_concurrent_acceptances_create_one_account(
    mail: tuple[TestClient, SmtpSink, World],
) -> None:
    client, sink, world = mail
    admin = await log_in_as(world, "org_admin")
    await _invite(client, admin, email=NEW, role="viewer")
    link = token_of(await sink.wait_for(NEW))
    await client.get("/ui/invitation", params={"token": link})
    form = {"token": link, "password": NEW_PASSWORD, "password_again": NEW_PASSWORD,
            "csrf_token": csrf_of(client)}  # fmt: skip
    answers = await asyncio.gather(*(
        client.post("/ui/invitation", data=form, headers=ORIGIN, allow_redirects=False)
        for _ in range(4)))  # fmt: skip
    assert sorted(a.status for a in answers) == [303, 400, 400, 400]
    users = await (await client.get("/users", headers=bearer(admin),
                                    params={"limit": "200"})).json()  # fmt: skip
    assert [u["email"] for u in users["items"]].count(NEW) == 1


async def test_page_refuses_a_password_mismatch_or_policy_without_spending_the_link(
    mail: tuple[TestClient, SmtpSink, World],
) -> None:
    client, sink, world = mail
    admin = await log_in_as(world, "org_admin")
    await _invite(client, admin, email=NEW, role="viewer")
    link = token_of(await sink.wait_for(NEW))
    await client.get("/ui/invitation", params={"token": link})
    for password, again in (("short", "short"), (NEW_PASSWORD, NEW_PASSWORD + "x")):
        form = {"token": link, "password": password, "password_again": again,
                "csrf_token": csrf_of(client)}  # fmt: skip
        resp = await client.post("/ui/invitation", data=form, headers=ORIGIN)
        assert resp.status == 422
        assert re.search(r'role="alert"', await resp.text())
    no_csrf = {"token": link, "password": NEW_PASSWORD, "password_again": NEW_PASSWORD}
    assert (await client.post("/ui/invitation", data=no_csrf, headers=ORIGIN)).status == 403
    _, posted = await _accept(client, link)
    assert posted.status == 303


async def test_a_federated_acceptance_creates_the_invited_account_with_the_identity(
    make_client: MakeClient,
    smtp_server: tuple[SmtpSink, int],
    upstream: dict[str, str],
    tmp_path: Path,
) -> None:
    """ "Continue with TestIdP" on the invitation page: the real oidc-provider's login, then the
    callback creates the invited account (its email, verified; role; org; group) with the
    identity linked, signed in on /ui/account; the link is spent. The same identity cannot
    accept a second invitation: that one stays pending and creates nothing."""
    sink, port = smtp_server
    config = tmp_path / "authsvc.toml"
    config.write_text(provider_toml(upstream))
    client = await make_client(smtp_env(port), config_path=str(config))
    world = await make_world(client)
    admin = await log_in_as(world, "org_admin")
    group = world.orgs["same"].group
    await _invite(client, admin, email=NEW, role="org_admin", group_ids=[group])
    link = token_of(await sink.wait_for(NEW))

    async def accept_with_provider(link_token: str) -> Any:
        page = await client.get("/ui/invitation", params={"token": link_token})
        assert "Continue with TestIdP" in await page.text()
        form = {"token": link_token, "provider": "test", "csrf_token": csrf_of(client)}
        started = await client.post("/ui/invitation/federation", data=form, headers=ORIGIN,
                                    allow_redirects=False)  # fmt: skip
        assert started.status == 303, await started.text()
        return await callback(client, await upstream_login(started.headers["Location"], "fedzoe"))

    answer = await accept_with_provider(link)
    assert answer.status == 303 and answer.headers["Location"] == "/ui/account"
    account = await client.get("/ui/account", allow_redirects=False)
    assert account.status == 200 and NEW in await account.text()
    assert "Unlink TestIdP" in await account.text()
    async with container_of(client).storage().read() as uow:
        user = await uow.users.get_by_email(NEW)
        assert user is not None
        found = await uow.users.get_with_groups(user.id)
        identities = await uow.identities.list_for_user(user.id)
    assert found is not None and found[1] == [group]
    assert (user.role.value, user.org_id, user.email_verified) == ("org_admin", HOME, True)
    assert [(i.provider, i.subject, i.email_was_verified) for i in identities] == [
        ("test", "fedzoe", True)]  # fmt: skip
    page = await client.get("/ui/invitation", params={"token": link})
    assert page.status == 400

    other = "second.person@example.com"
    await _invite(client, admin, email=other, role="viewer")
    refused = await accept_with_provider(token_of(await sink.wait_for(other)))
    assert refused.status == 409
    listed = await (await client.get("/invitations", headers=bearer(admin))).json()
    assert sorted(i["status"] for i in listed["items"]) == ["accepted", "pending"]
    async with container_of(client).storage().read() as uow:
        assert await uow.users.get_by_email(other) is None
