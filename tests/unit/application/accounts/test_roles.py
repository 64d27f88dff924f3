"""Roles through the accounts use cases over the in-memory adapters (docs/reference/accounts.md):
the permission matrix, the one table of ``tests/unit/domain/test_policy.py``, driven through the
real use cases (403 before 404; the same 404 for a missing and a foreign resource), then the
escalation rules of setting a role and its events (published after the commit only)."""

from __future__ import annotations

import asyncio

import pytest

from application.console.caller import ConsoleCaller
from application.events.catalog import (
    MfaDisabled,
    RoleChanged,
)
from application.scim.users import ProvisionUser, UpdateScimUser
from domain.errors import (
    Forbidden,
    LastSuperadmin,
    NotFound,
    ValidationFailed,
)
from domain.model import Role
from domain.policy import Operation, Principal
from tests.unit.application.accounts.world import THIRD_ORG, World, as_principal, normalize_email
from tests.unit.domain.test_policy import CALLER_ORG, MATRIX, OTHER_ORG, matrix_id

# --------------------------------------------------------------------------- the matrix


async def _seed_matrix(world: World, role: Role) -> Principal:
    """Caller of ``role`` in acme; in each of acme and globex: a viewer ``user-<org>`` (no
    group) with MFA on and a session, a ``member-<org>`` of ``group-<org>``."""
    me = await world.add_user("caller", role, CALLER_ORG)
    for org in (CALLER_ORG, OTHER_ORG):
        await world.add_user(f"user-{org}", Role.VIEWER, org)
        await world.add_session(f"user-{org}", f"session-{org}")
        await world.enable_mfa(f"user-{org}")
        await world.add_user(f"member-{org}", Role.VIEWER, org)
        await world.add_group(f"group-{org}", org, members=(f"member-{org}",))
        await world.add_audit_row(f"user-{org}", org)
        await world.add_client(f"client-{org}", org)
        await world.add_passkey(f"user-{org}")
        await world.add_invitation(f"inv-{org}", org)
        await world.add_webhook(f"hook-{org}", org)
    return as_principal(me)


async def _run(world: World, op: Operation, me: Principal, org: str) -> None:
    """Perform ``op`` on the ``org`` targets and check its effect when it is allowed."""
    user_id, group_id, member_id = f"user-{org}", f"group-{org}", f"member-{org}"
    if op is Operation.LIST_USERS:
        page = await world.list_users(me, org_id=org)
        assert {u.org_id for u in page.items} == {org}
        assert user_id in {u.id for u in page.items}
    elif op is Operation.VIEW_USER:
        assert (await world.get_user(me, user_id)).id == user_id
    elif op is Operation.SET_ROLE:
        assert (await world.set_role(me, user_id, "operator")).role is Role.OPERATOR
    elif op is Operation.MOVE_USER:
        assert (await world.move_user(me, user_id, THIRD_ORG)).org_id == THIRD_ORG
    elif op is Operation.DISABLE_USER:
        assert (await world.update_user(me, user_id, disabled=True)).disabled
        assert await world.list_sessions(me, user_id) == []  # its sessions ended with it
    elif op is Operation.DELETE_USER:
        await world.delete_user(me, user_id)
        assert await world.user(user_id) is None
    elif op is Operation.LIST_USER_SESSIONS:
        listed = await world.list_sessions(me, user_id)
        assert [x.session.id for x in listed] == [f"session-{org}"]
    elif op is Operation.END_USER_SESSIONS:
        assert await world.end_user_sessions(me, user_id) == [f"session-{org}"]
        assert await world.list_sessions(me, user_id) == []
    elif op is Operation.RESET_USER_MFA:
        await world.reset_user_mfa(me, user_id)
        target = await world.user(user_id)
        assert target is not None and not target.mfa_enabled
        assert [type(e) for e in world.events] == [MfaDisabled]
    elif op is Operation.LIST_GROUPS:
        groups = await world.list_groups(me, org_id=org)
        assert [s.group.id for s in groups.items] == [group_id]
    elif op is Operation.VIEW_GROUP:
        detail = await world.get_group(me, group_id)
        assert [m.id for m in detail.members] == [member_id]
    elif op is Operation.CREATE_GROUP:
        assert (await world.create_group(me, "new", org_id=org)).group.org_id == org
    elif op is Operation.RENAME_GROUP:
        assert (await world.rename_group(me, group_id, "renamed")).group.name == "renamed"
    elif op is Operation.DELETE_GROUP:
        await world.delete_group(me, group_id)
        assert not await world.group_exists(group_id)
    elif op is Operation.ADD_MEMBER:
        assert await world.add_member(me, group_id, user_id) is True
    elif op is Operation.REMOVE_MEMBER:
        assert await world.remove_member(me, group_id, member_id) is True
    elif op is Operation.LIST_AUDIT_EVENTS:
        rows = await world.list_audit_events(me, org_id=org)
        assert [(r.user_id, r.org_id) for r in rows.items] == [(user_id, org)]
    elif op is Operation.LIST_CLIENTS:
        clients = await world.list_clients(me, org_id=org)
        assert [c.id for c in clients.items] == [f"client-{org}"]
    elif op is Operation.VIEW_CLIENT:
        assert (await world.get_client(me, f"client-{org}")).org_id == org
    elif op is Operation.CREATE_CLIENT:
        made = await world.create_client(me, "new", ["read"], org_id=org)
        assert made.client.org_id == org and made.client_secret
    elif op is Operation.UPDATE_CLIENT:
        assert (await world.update_client(me, f"client-{org}", disabled=True)).disabled
    elif op is Operation.DELETE_CLIENT:
        await world.delete_client(me, f"client-{org}")
        assert await world.client(f"client-{org}") is None
    elif op is Operation.ROTATE_CLIENT_SECRET:
        before = await world.client(f"client-{org}")
        assert await world.rotate_client_secret(me, f"client-{org}")
        after = await world.client(f"client-{org}")
        assert before is not None and after is not None
        assert after.secret_hash != before.secret_hash
    elif op is Operation.LIST_USER_PASSKEYS:
        listed = await world.passkey_admin.list(me, user_id)
        assert [p.id for p in listed] == [f"pk-{user_id}"]
    elif op is Operation.DELETE_USER_PASSKEY:
        await world.passkey_admin.delete(me, user_id, f"pk-{user_id}")
        assert await world.passkeys_of(user_id) == []
    elif op is Operation.USE_ADMIN_CONSOLE:  # the console's home page for that organization
        ConsoleCaller.admit(me)
        assert (await world.dashboard(me, org_id=org)).users == (3 if org == me.org_id else 2)
    elif op is Operation.VIEW_DASHBOARD:
        view = await world.dashboard(me, org_id=org)
        assert view.users == (3 if org == me.org_id else 2)  # the caller counts in its org
        assert view.active_sessions == 1 and len(view.hours) == 24
        assert (view.signing_keys is None) is not me.is_superadmin
    elif op is Operation.VIEW_SIGNING_KEYS:
        assert [k.alg for k in world.dashboard.signing_keys(me)] == ["RS256"]
    elif op is Operation.VIEW_IDENTITY_PROVIDERS:  # none configured; every org's sign-in
        assert await world.identity_providers(me) == []
    elif op is Operation.SEND_PASSWORD_RESET:
        await world.password_recovery.send_to_user(me, user_id, "192.0.2.1")
        await world.outbox.drain(5)
        assert [m.to for m in world.sender.sent] == [f"{user_id}@example.com"]
    elif op is Operation.CREATE_INVITATION:
        made = await world.create_invitation(me, f"new@{org}.example", "viewer", [group_id], org)
        assert made.invitation.org_id == org and made.invitation.group_ids == (group_id,)
        assert [i.id for i, _ in world.mails] == [made.invitation.id]
    elif op is Operation.LIST_INVITATIONS:
        listed = await world.list_invitations(me, org_id=org)
        assert [v.invitation.id for v in listed.items] == [f"inv-{org}"]
    elif op is Operation.RESEND_INVITATION:
        before = await world.invitation(f"inv-{org}")
        resent = await world.resend_invitation(me, f"inv-{org}")
        assert before is not None and resent.invitation.token_hash != before.token_hash
        assert [i.id for i, _ in world.mails] == [f"inv-{org}"]
    elif op is Operation.REVOKE_INVITATION:
        await world.revoke_invitation(me, f"inv-{org}")
        revoked = await world.invitation(f"inv-{org}")
        assert revoked is not None and revoked.state.value == "revoked"
    elif op is Operation.PROVISION_USER:
        provision = ProvisionUser(world.spy, world.bus, world.clock, normalize_email)
        made = (await provision(me, f"new@{org}.example", org_id=org)).user
        assert made.org_id == org and made.password_hash == ""
    elif op is Operation.UPDATE_PROVISIONED_USER:
        update = UpdateScimUser(
            world.spy, world.bus, world.clock, normalize_email, world.update_user
        )
        await update(me, user_id, user_name=f"renamed@{org}.example")
        renamed = await world.user(user_id)
        assert renamed is not None and renamed.email == f"renamed@{org}.example"
        assert not renamed.email_verified
    elif op.value.endswith(("_webhook", "_webhooks", "_webhook_secret")):
        await _run_webhook(world, op, me, org)
    else:  # pragma: no cover - a new Operation needs a line here
        raise AssertionError(op)


async def _run_webhook(world: World, op: Operation, me: Principal, org: str) -> None:
    """The webhook operations of the matrix on ``hook-<org>``."""
    hook_id = f"hook-{org}"
    if op is Operation.CREATE_WEBHOOK:
        made = await world.create_webhook(me, "https://new.example/", ["user.deleted"], org_id=org)
        assert made.webhook.org_id == org and made.secret.startswith("whsec_")
    elif op is Operation.LIST_WEBHOOKS:
        listed = await world.list_webhooks(me, org_id=org)
        assert [w.id for w in listed.items] == [hook_id]
    elif op is Operation.VIEW_WEBHOOK:
        assert (await world.get_webhook(me, hook_id)).org_id == org
        assert (await world.list_webhook_deliveries(me, hook_id)).items == ()
    elif op is Operation.UPDATE_WEBHOOK:
        assert not (await world.update_webhook(me, hook_id, {"enabled": False})).enabled
    elif op is Operation.DELETE_WEBHOOK:
        await world.delete_webhook(me, hook_id)
        assert await world.webhook(hook_id) is None
    elif op is Operation.ROTATE_WEBHOOK_SECRET:
        before = await world.webhook(hook_id)
        rotated = await world.rotate_webhook_secret(me, hook_id)
        assert before is not None and rotated.webhook.sealed_secret != before.sealed_secret
    elif op is Operation.TEST_WEBHOOK:
        assert await world.test_webhook(me, hook_id)
    else:  # pragma: no cover - a new webhook Operation needs a line here
        raise AssertionError(op)


@pytest.mark.parametrize("case", MATRIX, ids=matrix_id)
async def test_permission_matrix_through_the_use_cases(
    world: World, case: tuple[Operation, str, Role, type[Exception] | None]
) -> None:
    op, org, role, expected = case
    me = await _seed_matrix(world, role)
    if expected is None:
        await _run(world, op, me, org)
    else:
        before = await world.state()
        with pytest.raises(expected) as info:
            await _run(world, op, me, org)
        assert type(info.value) is expected
        assert world.events == []
        assert await world.state() == before  # a refused call changes nothing


@pytest.mark.parametrize("role", [Role.VIEWER, Role.OPERATOR, Role.ORG_ADMIN])
async def test_not_found_is_the_same_for_missing_and_foreign_resources(
    world: World, role: Role
) -> None:
    me = await _seed_matrix(world, role)
    with pytest.raises(NotFound) as foreign:
        await world.get_group(me, f"group-{OTHER_ORG}")
    with pytest.raises(NotFound) as missing:
        await world.get_group(me, "no-such-group")
    assert foreign.value.detail == missing.value.detail


@pytest.mark.parametrize("role", [Role.VIEWER, Role.OPERATOR])
async def test_forbidden_role_gets_403_even_for_a_missing_target(world: World, role: Role) -> None:
    me = as_principal(await world.add_user("me", role))
    with pytest.raises(Forbidden):
        await world.get_user(me, "no-such-user")
    with pytest.raises(Forbidden):
        await world.set_role(me, "no-such-user", "not-a-role")
    with pytest.raises(Forbidden):
        await world.delete_group(me, "no-such-group")


# --------------------------------------------------------------------------- roles


class TestSetRole:
    async def test_org_admin_promotes_in_own_org_and_event_follows_commit(
        self, world: World
    ) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_user("bob")
        user = await world.set_role(admin_, "bob", Role.ORG_ADMIN)
        assert user.role is Role.ORG_ADMIN
        assert (await world.user("bob")).role is Role.ORG_ADMIN  # type: ignore[union-attr]
        assert world.events == [RoleChanged("bob", "admin", "viewer", "org_admin")]
        assert world.published_inside_unit == []

    async def test_org_admin_may_not_grant_superadmin(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_user("bob")
        with pytest.raises(Forbidden):
            await world.set_role(admin_, "bob", "superadmin")
        assert (await world.user("bob")).role is Role.VIEWER  # type: ignore[union-attr]

    async def test_org_admin_may_not_change_a_superadmin_of_its_org(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_user("root", Role.SUPERADMIN)
        await world.add_user("root2", Role.SUPERADMIN)
        with pytest.raises(Forbidden):
            await world.set_role(admin_, "root", "viewer")

    async def test_org_admin_gets_404_for_a_superadmin_of_another_org(self, world: World) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        await world.add_user("root", Role.SUPERADMIN, OTHER_ORG)
        with pytest.raises(NotFound):
            await world.set_role(admin_, "root", "viewer")

    @pytest.mark.parametrize("new_role", ["viewer", "org_admin", "superadmin"])
    async def test_org_admin_may_not_change_its_own_role(self, world: World, new_role: str) -> None:
        admin_ = as_principal(await world.add_user("admin", Role.ORG_ADMIN))
        with pytest.raises(Forbidden):
            await world.set_role(admin_, "admin", new_role)

    async def test_unknown_role_is_a_validation_error_naming_role(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_user("bob")
        with pytest.raises(ValidationFailed) as info:
            await world.set_role(root, "bob", "god")
        assert [e.field for e in info.value.errors] == ["role"]

    async def test_superadmin_sets_any_role_across_orgs(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_user("bob", org=OTHER_ORG)
        assert (await world.set_role(root, "bob", "superadmin")).role is Role.SUPERADMIN
        assert (await world.set_role(root, "bob", "operator")).role is Role.OPERATOR

    async def test_last_superadmin_cannot_demote_itself(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        with pytest.raises(LastSuperadmin):
            await world.set_role(root, "root", "org_admin")
        assert (await world.user("root")).role is Role.SUPERADMIN  # type: ignore[union-attr]
        assert world.events == []

    async def test_one_of_two_superadmins_may_go_then_the_other_may_not(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_user("root2", Role.SUPERADMIN, OTHER_ORG)
        await world.set_role(root, "root2", "viewer")
        with pytest.raises(LastSuperadmin):
            await world.set_role(root, "root", "viewer")

    async def test_concurrent_demotions_leave_one_superadmin(self, world: World) -> None:
        a = as_principal(await world.add_user("a", Role.SUPERADMIN))
        b = as_principal(await world.add_user("b", Role.SUPERADMIN))
        results = await asyncio.gather(
            world.set_role(a, "b", "viewer"),
            world.set_role(b, "a", "viewer"),
            return_exceptions=True,
        )
        assert sum(isinstance(r, LastSuperadmin) for r in results) == 1
        async with world.spy.inner.begin() as uow:
            assert await uow.users.count_by_role(Role.SUPERADMIN) == 1

    async def test_setting_the_same_role_writes_and_publishes_nothing(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_user("bob")
        commits = world.spy.commits
        assert (await world.set_role(root, "bob", "viewer")).role is Role.VIEWER
        assert world.events == []
        assert world.spy.commits == commits + 1  # an empty commit; nothing changed

    async def test_failed_commit_publishes_nothing_and_changes_nothing(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_user("bob")
        world.spy.fail_commit = True
        with pytest.raises(RuntimeError):
            await world.set_role(root, "bob", "operator")
        assert world.events == []
        assert (await world.user("bob")).role is Role.VIEWER  # type: ignore[union-attr]

    async def test_subscriber_sees_the_committed_role(self, world: World) -> None:
        root = as_principal(await world.add_user("root", Role.SUPERADMIN))
        await world.add_user("bob")
        seen: list[Role] = []

        async def read_back(event: RoleChanged) -> None:
            user = await world.user(event.user_id)  # would deadlock inside the unit
            assert user is not None
            seen.append(user.role)

        world.bus.subscribe(RoleChanged, read_back)
        await asyncio.wait_for(world.set_role(root, "bob", "operator"), timeout=5)
        assert seen == [Role.OPERATOR]
