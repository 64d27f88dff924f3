"""domain.policy: the permission matrix and the escalation rules of docs/reference/accounts.md, and
access to the actuator (docs/reference/operations.md).

``MATRIX`` below is the one table of who may do what; ``tests/unit/application/accounts/test_roles.py`` drives the
real use cases with the same table. ``ACTUATOR_MATRIX`` is the actuator's (no organization
scope); ``tests/e2e/http/test_actuator_http.py`` drives the real routes with the same rows.
"""

from __future__ import annotations

from datetime import UTC, datetime

import attrs
import pytest

from domain import policy
from domain.clients import Client, Resource
from domain.errors import Forbidden, LastSuperadmin, NotFound, ValidationFailed
from domain.invitations import Invitation
from domain.model import Group, Role, User
from domain.policy import CLI_OPERATOR, ActuatorOperation, Operation, Principal
from domain.webhooks import Webhook

#  The permission matrix of docs/reference/accounts.md. The caller belongs to organization "acme";
# the target (user, group, or the organization named in a listing / creation) is in "acme" (same) or
# in "globex" (other). ok = allowed, 403 = Forbidden, 404 = NotFound.
_MATRIX_TABLE = """
operation       target   viewer  operator  org_admin  superadmin
list_users      same     403     403       ok         ok
list_users      other    403     403       404        ok
view_user       same     403     403       ok         ok
view_user       other    403     403       404        ok
set_role        same     403     403       ok         ok
set_role        other    403     403       404        ok
move_user       same     403     403       403        ok
move_user       other    403     403       403        ok
disable_user    same     403     403       ok         ok
disable_user    other    403     403       404        ok
delete_user     same     403     403       ok         ok
delete_user     other    403     403       404        ok
list_user_sessions same  403     403       ok         ok
list_user_sessions other 403     403       404        ok
end_user_sessions same   403     403       ok         ok
end_user_sessions other  403     403       404        ok
reset_user_mfa  same     403     403       ok         ok
reset_user_mfa  other    403     403       404        ok
list_groups     same     ok      ok        ok         ok
list_groups     other    404     404       404        ok
view_group      same     ok      ok        ok         ok
view_group      other    404     404       404        ok
create_group    same     403     403       ok         ok
create_group    other    403     403       404        ok
rename_group    same     403     403       ok         ok
rename_group    other    403     403       404        ok
delete_group    same     403     403       ok         ok
delete_group    other    403     403       404        ok
add_member      same     403     403       ok         ok
add_member      other    403     403       404        ok
remove_member   same     403     403       ok         ok
remove_member   other    403     403       404        ok
list_audit_events same   403     403       ok         ok
list_audit_events other  403     403       404        ok
list_clients    same     403     403       ok         ok
list_clients    other    403     403       404        ok
view_client     same     403     403       ok         ok
view_client     other    403     403       404        ok
create_client   same     403     403       ok         ok
create_client   other    403     403       404        ok
update_client   same     403     403       ok         ok
update_client   other    403     403       404        ok
delete_client   same     403     403       ok         ok
delete_client   other    403     403       404        ok
rotate_client_secret same 403    403       ok         ok
rotate_client_secret other 403   403       404        ok
list_user_passkeys same  403     403       ok         ok
list_user_passkeys other 403     403       404        ok
delete_user_passkey same 403     403       ok         ok
delete_user_passkey other 403    403       404        ok
use_admin_console same   403     403       ok         ok
use_admin_console other  403     403       404        ok
view_dashboard  same     403     403       ok         ok
view_dashboard  other    403     403       404        ok
view_signing_keys same   403     403       403        ok
view_signing_keys other  403     403       403        ok
view_identity_providers same 403 403       ok         ok
view_identity_providers other 403 403      ok         ok
send_password_reset same 403     403       ok         ok
send_password_reset other 403    403       404        ok
create_invitation same   403     403       ok         ok
create_invitation other  403     403       404        ok
list_invitations same    403     403       ok         ok
list_invitations other   403     403       404        ok
resend_invitation same   403     403       ok         ok
resend_invitation other  403     403       404        ok
revoke_invitation same   403     403       ok         ok
revoke_invitation other  403     403       404        ok
provision_user  same     403     403       ok         ok
provision_user  other    403     403       404        ok
update_provisioned_user same 403 403       ok         ok
update_provisioned_user other 403 403      404        ok
create_webhook same 403 403 ok ok
create_webhook other 403 403 404 ok
list_webhooks same 403 403 ok ok
list_webhooks other 403 403 404 ok
view_webhook same 403 403 ok ok
view_webhook other 403 403 404 ok
update_webhook same 403 403 ok ok
update_webhook other 403 403 404 ok
delete_webhook same 403 403 ok ok
delete_webhook other 403 403 404 ok
rotate_webhook_secret same 403 403 ok ok
rotate_webhook_secret other 403 403 404 ok
test_webhook same 403 403 ok ok
test_webhook other 403 403 404 ok
"""

CALLER_ORG = "acme"
OTHER_ORG = "globex"
_OUTCOMES: dict[str, type[Exception] | None] = {"ok": None, "403": Forbidden, "404": NotFound}


def _parse(table: str) -> list[tuple[Operation, str, Role, type[Exception] | None]]:
    lines = [line.split() for line in table.strip().splitlines()]
    header, rows = lines[0], lines[1:]
    roles = [Role(name) for name in header[2:]]
    cases = []
    for op_name, target, *outcomes in rows:
        assert target in ("same", "other")
        assert len(outcomes) == len(roles)
        for role, outcome in zip(roles, outcomes, strict=True):
            org = CALLER_ORG if target == "same" else OTHER_ORG
            cases.append((Operation(op_name), org, role, _OUTCOMES[outcome]))
    return cases


MATRIX = _parse(_MATRIX_TABLE)
"""(operation, target org, caller role, expected exception or None) for every combination."""


def matrix_id(case: tuple[Operation, str, Role, type[Exception] | None]) -> str:
    """A readable test id: ``set_role-globex-org_admin-NotFound``."""
    op, org, role, expected = case
    return f"{op.value}-{org}-{role.value}-{expected.__name__ if expected else 'ok'}"


def test_matrix_covers_every_role_operation_and_target() -> None:
    combos = {(op, org, role) for op, org, role, _ in MATRIX}
    assert len(combos) == len(MATRIX) == len(Operation) * 2 * len(Role)


NOW = datetime(2026, 1, 1, tzinfo=UTC)

_ACCOUNT_OPERATIONS = (
    Operation.DISABLE_USER,
    Operation.DELETE_USER,
    Operation.LIST_USER_SESSIONS,
    Operation.END_USER_SESSIONS,
    Operation.RESET_USER_MFA,
    Operation.LIST_USER_PASSKEYS,
    Operation.DELETE_USER_PASSKEY,
    Operation.SEND_PASSWORD_RESET,
    Operation.UPDATE_PROVISIONED_USER,
)
_ON_ITSELF_ONLY_THROUGH_ME = (
    Operation.DISABLE_USER,
    Operation.DELETE_USER,
    Operation.RESET_USER_MFA,
    Operation.LIST_USER_PASSKEYS,
    Operation.DELETE_USER_PASSKEY,
    Operation.UPDATE_PROVISIONED_USER,
)


def user(uid: str, role: Role, org: str = CALLER_ORG) -> User:
    return User(uid, f"{uid}@example.com", "x", role, org, NOW)


def caller(role: Role, org: str = CALLER_ORG, uid: str = "caller") -> Principal:
    return Principal(uid, role, org)


def invitation(org: str = CALLER_ORG, role: Role = Role.VIEWER) -> Invitation:
    return Invitation("inv", org, "new@example.com", role, (), "admin", NOW, NOW, "0" * 64)


def webhook(org: str = CALLER_ORG) -> Webhook:
    return Webhook("w", org, "https://h.example/", ("group.created",), "", True, b"s", NOW, NOW)


def _policy_check(op: Operation, principal: Principal, org: str) -> None:
    """Ask the policy the way the use case of ``op`` does."""
    if op is Operation.SET_ROLE:
        policy.check_role_change(principal, user("target", Role.VIEWER, org), Role.OPERATOR, 1)
    elif op in (
        Operation.LIST_USERS,
        Operation.LIST_GROUPS,
        Operation.LIST_AUDIT_EVENTS,
        Operation.LIST_CLIENTS,
        Operation.LIST_INVITATIONS,
    ):
        assert policy.list_scope(principal, op, org) == org
    elif op is Operation.LIST_WEBHOOKS:
        assert policy.webhook_list_org(principal, org) == org
    elif op is Operation.CREATE_WEBHOOK:
        assert policy.webhook_org(principal, org) == org
    elif op.value.endswith(("_webhook", "_webhook_secret")):
        policy.check_webhook_access(principal, webhook(org), op)
    elif op is Operation.CREATE_INVITATION:
        assert policy.invitation_org(principal, org, Role.VIEWER) == org
    elif op in (Operation.RESEND_INVITATION, Operation.REVOKE_INVITATION):
        policy.check_invitation_change(principal, invitation(org), op)
    elif op in (Operation.CREATE_GROUP, Operation.CREATE_CLIENT):
        assert policy.target_org(principal, op, org) == org
    elif op in _ACCOUNT_OPERATIONS:
        policy.check_user_management(principal, user("target", Role.VIEWER, org), op)
    elif op is Operation.VIEW_IDENTITY_PROVIDERS:  # they serve every organization's sign-in
        policy.require(principal, op)
    else:
        policy.authorize(principal, op, org)


@pytest.mark.parametrize("case", MATRIX, ids=matrix_id)
def test_permission_matrix(case: tuple[Operation, str, Role, type[Exception] | None]) -> None:
    op, org, role, expected = case
    principal = caller(role)
    if expected is None:
        _policy_check(op, principal, org)
    else:
        with pytest.raises(expected) as info:
            _policy_check(op, principal, org)
        assert type(info.value) is expected


@pytest.mark.parametrize("op", list(Operation))
@pytest.mark.parametrize("role", list(Role))
def test_role_is_checked_before_scope(op: Operation, role: Role) -> None:
    """A role never allowed an operation gets Forbidden, never NotFound, whatever the target."""
    principal = caller(role)
    if policy.can(principal, op):
        return
    with pytest.raises(Forbidden):
        policy.require(principal, op)
    with pytest.raises(Forbidden):
        policy.authorize(principal, op, OTHER_ORG)


def test_required_role_table_covers_every_operation() -> None:
    assert set(policy.REQUIRED_ROLE) == set(Operation)


def test_not_found_message_does_not_reveal_existence() -> None:
    with pytest.raises(NotFound) as info:
        policy.require_in_scope(caller(Role.ORG_ADMIN), OTHER_ORG, "user")
    assert info.value.detail == "user not found"
    assert OTHER_ORG not in info.value.detail


# The actuator's operations (docs/reference/operations.md): the role alone decides; ok = allowed,
# 403 = Forbidden (the authorizer answers "forbidden").
_ACTUATOR_TABLE = """
operation               viewer  operator  org_admin  superadmin
see_health_details      403     403       ok         ok
read_metrics            ok      ok        ok         ok
refresh_configuration   403     403       403        ok
"""


def _parse_actuator(table: str) -> list[tuple[ActuatorOperation, Role, bool]]:
    lines = [line.split() for line in table.strip().splitlines()]
    roles = [Role(name) for name in lines[0][1:]]
    return [
        (ActuatorOperation(row[0]), role, {"ok": True, "403": False}[outcome])
        for row in lines[1:]
        for role, outcome in zip(roles, row[1:], strict=True)
    ]


ACTUATOR_MATRIX = _parse_actuator(_ACTUATOR_TABLE)
"""(actuator operation, caller role, allowed) for every combination."""


def test_actuator_matrix_covers_every_role_and_operation() -> None:
    combos = {(op, role) for op, role, _ in ACTUATOR_MATRIX}
    assert len(combos) == len(ACTUATOR_MATRIX) == len(ActuatorOperation) * len(Role)
    assert set(policy.ACTUATOR_REQUIRED_ROLE) == set(ActuatorOperation)


@pytest.mark.parametrize(
    ("op", "role", "allowed"),
    ACTUATOR_MATRIX,
    ids=[
        f"{op.value}-{role.value}-{'ok' if ok else 'Forbidden'}" for op, role, ok in ACTUATOR_MATRIX
    ],
)
def test_actuator_permission_matrix(op: ActuatorOperation, role: Role, allowed: bool) -> None:
    for org in (CALLER_ORG, OTHER_ORG):  # no organization scope: the caller's org is irrelevant
        principal = caller(role, org)
        assert policy.can(principal, op) is allowed
        if allowed:
            policy.require(principal, op)
        else:
            with pytest.raises(Forbidden):
                policy.require(principal, op)


@pytest.mark.parametrize("op", [*Operation, *ActuatorOperation])
def test_the_command_line_operator_may_do_everything(op: Operation | ActuatorOperation) -> None:
    assert policy.can(CLI_OPERATOR, op)
    policy.require(CLI_OPERATOR, op)


def test_principal_of_a_user_record() -> None:
    stored = user("u1", Role.ORG_ADMIN, OTHER_ORG)
    assert Principal.of(stored) == Principal("u1", Role.ORG_ADMIN, OTHER_ORG)


class TestListScope:
    def test_org_admin_gets_own_org_by_default(self) -> None:
        assert policy.list_scope(caller(Role.ORG_ADMIN), Operation.LIST_USERS, None) == CALLER_ORG

    def test_viewer_lists_groups_of_own_org(self) -> None:
        assert policy.list_scope(caller(Role.VIEWER), Operation.LIST_GROUPS, None) == CALLER_ORG

    def test_superadmin_without_filter_lists_every_org(self) -> None:
        assert policy.list_scope(caller(Role.SUPERADMIN), Operation.LIST_USERS, None) is None

    def test_superadmin_filters_any_org(self) -> None:
        principal = caller(Role.SUPERADMIN)
        assert policy.list_scope(principal, Operation.LIST_USERS, "nowhere") == "nowhere"

    def test_org_admin_naming_any_other_org_gets_not_found(self) -> None:
        for org in (OTHER_ORG, "does-not-exist"):
            with pytest.raises(NotFound):
                policy.list_scope(caller(Role.ORG_ADMIN), Operation.LIST_USERS, org)


class TestTargetOrg:
    def test_superadmin_defaults_to_own_org(self) -> None:
        principal = caller(Role.SUPERADMIN)
        assert policy.target_org(principal, Operation.CREATE_GROUP, None) == CALLER_ORG

    def test_org_admin_defaults_to_own_org(self) -> None:
        principal = caller(Role.ORG_ADMIN)
        assert policy.target_org(principal, Operation.CREATE_GROUP, None) == CALLER_ORG


class TestRoleChange:
    """Escalation rules (docs/reference/accounts.md)."""

    admin = caller(Role.ORG_ADMIN)
    root = caller(Role.SUPERADMIN, uid="root")

    @pytest.mark.parametrize("new_role", [Role.VIEWER, Role.OPERATOR, Role.ORG_ADMIN])
    @pytest.mark.parametrize("old_role", [Role.VIEWER, Role.OPERATOR, Role.ORG_ADMIN])
    def test_org_admin_sets_non_superadmin_roles_in_own_org(
        self, old_role: Role, new_role: Role
    ) -> None:
        policy.check_role_change(self.admin, user("t", old_role), new_role, 1)

    @pytest.mark.parametrize("old_role", [Role.VIEWER, Role.OPERATOR, Role.ORG_ADMIN])
    def test_org_admin_may_not_grant_superadmin(self, old_role: Role) -> None:
        with pytest.raises(Forbidden):
            policy.check_role_change(self.admin, user("t", old_role), Role.SUPERADMIN, 1)

    @pytest.mark.parametrize("new_role", list(Role))
    def test_org_admin_may_not_change_a_superadmin(self, new_role: Role) -> None:
        with pytest.raises(Forbidden):
            policy.check_role_change(self.admin, user("t", Role.SUPERADMIN), new_role, 5)

    @pytest.mark.parametrize("new_role", list(Role))
    def test_org_admin_may_not_change_its_own_role(self, new_role: Role) -> None:
        me = user(self.admin.user_id, Role.ORG_ADMIN)
        with pytest.raises(Forbidden):
            policy.check_role_change(self.admin, me, new_role, 1)

    def test_org_admin_gets_not_found_for_a_superadmin_of_another_org(self) -> None:
        """Scope is checked before the escalation rules: nothing about the target leaks."""
        target = user("t", Role.SUPERADMIN, OTHER_ORG)
        with pytest.raises(NotFound):
            policy.check_role_change(self.admin, target, Role.VIEWER, 5)

    @pytest.mark.parametrize("role", [Role.VIEWER, Role.OPERATOR])
    def test_viewer_and_operator_are_forbidden_even_on_themselves(self, role: Role) -> None:
        me = caller(role)
        with pytest.raises(Forbidden):
            policy.check_role_change(me, user(me.user_id, role), role, 1)

    @pytest.mark.parametrize("new_role", list(Role))
    @pytest.mark.parametrize("old_role", [Role.VIEWER, Role.OPERATOR, Role.ORG_ADMIN])
    def test_superadmin_sets_any_role_in_any_org(self, old_role: Role, new_role: Role) -> None:
        policy.check_role_change(self.root, user("t", old_role, OTHER_ORG), new_role, 1)

    @pytest.mark.parametrize("new_role", [Role.VIEWER, Role.OPERATOR, Role.ORG_ADMIN])
    def test_last_superadmin_cannot_be_demoted(self, new_role: Role) -> None:
        with pytest.raises(LastSuperadmin):
            policy.check_role_change(self.root, user("root", Role.SUPERADMIN), new_role, 1)
        with pytest.raises(LastSuperadmin):
            policy.check_role_change(self.root, user("other", Role.SUPERADMIN), new_role, 1)

    def test_a_superadmin_may_be_demoted_while_another_remains(self) -> None:
        policy.check_role_change(self.root, user("root", Role.SUPERADMIN), Role.VIEWER, 2)
        policy.check_role_change(self.root, user("x", Role.SUPERADMIN, OTHER_ORG), Role.VIEWER, 2)

    def test_keeping_the_last_superadmin_superadmin_is_allowed(self) -> None:
        policy.check_role_change(self.root, user("root", Role.SUPERADMIN), Role.SUPERADMIN, 1)

    def test_last_superadmin_rule_alone(self) -> None:
        with pytest.raises(LastSuperadmin):
            policy.check_last_superadmin(user("r", Role.SUPERADMIN), Role.OPERATOR, 1)
        policy.check_last_superadmin(user("r", Role.SUPERADMIN), Role.OPERATOR, 2)
        policy.check_last_superadmin(user("r", Role.ORG_ADMIN), Role.VIEWER, 0)


class TestMemberOrg:
    group = Group("g", "ops", CALLER_ORG, NOW)

    def test_member_of_the_group_org_is_accepted(self) -> None:
        policy.check_member_org(self.group, user("u", Role.VIEWER, CALLER_ORG))

    def test_member_of_another_org_is_a_validation_error_naming_user_id(self) -> None:
        with pytest.raises(ValidationFailed) as info:
            policy.check_member_org(self.group, user("u", Role.VIEWER, OTHER_ORG))
        assert [e.field for e in info.value.errors] == ["user_id"]


def test_principal_is_frozen_and_knows_superadmin() -> None:
    p = Principal("u", Role.SUPERADMIN, "acme")
    assert p.is_superadmin
    assert not Principal("u", Role.ORG_ADMIN, "acme").is_superadmin
    with pytest.raises(AttributeError):
        p.role = Role.VIEWER  # type: ignore[misc]


# --------------------------------------------------------------------------- accounts (§7–8)


@pytest.mark.parametrize("op", _ACCOUNT_OPERATIONS)
def test_org_admin_may_not_manage_a_superadmins_account_except_to_list_its_sessions(
    op: Operation,
) -> None:
    target = user("root", Role.SUPERADMIN)
    if op is Operation.LIST_USER_SESSIONS:
        policy.check_user_management(caller(Role.ORG_ADMIN), target, op)
        return
    with pytest.raises(Forbidden):
        policy.check_user_management(caller(Role.ORG_ADMIN), target, op)
    policy.check_user_management(caller(Role.SUPERADMIN), target, op)
    policy.check_user_management(CLI_OPERATOR, target, op)


@pytest.mark.parametrize("op", _ON_ITSELF_ONLY_THROUGH_ME)
def test_org_admin_acts_on_its_own_account_and_factors_only_through_me(op: Operation) -> None:
    """docs/reference/accounts.md and docs/reference/mfa-and-passkeys.md: disable, delete, MFA
    reset, passkey list and delete."""
    me = caller(Role.ORG_ADMIN, uid="me")
    with pytest.raises(Forbidden):
        policy.check_user_management(me, user("me", Role.ORG_ADMIN), op)
    policy.check_user_management(me, user("peer", Role.ORG_ADMIN), op)  # another org_admin


def test_org_admin_may_send_itself_a_reset_link() -> None:
    """docs/reference/accounts.md: the link goes to its own mailbox."""
    me = caller(Role.ORG_ADMIN, uid="me")
    policy.check_user_management(me, user("me", Role.ORG_ADMIN), Operation.SEND_PASSWORD_RESET)


def test_org_admin_may_list_and_end_its_own_sessions_through_the_admin_routes() -> None:
    me = caller(Role.ORG_ADMIN, uid="me")
    for op in (Operation.LIST_USER_SESSIONS, Operation.END_USER_SESSIONS):
        policy.check_user_management(me, user("me", Role.ORG_ADMIN), op)


def test_superadmin_may_disable_and_delete_itself() -> None:
    me = caller(Role.SUPERADMIN, uid="me")
    for op in (Operation.DISABLE_USER, Operation.DELETE_USER):
        policy.check_user_management(me, user("me", Role.SUPERADMIN), op)


@pytest.mark.parametrize("op", [Operation.LIST_USER_PASSKEYS, Operation.DELETE_USER_PASSKEY])
def test_admin_passkey_routes_follow_the_user_management_rule(op: Operation) -> None:
    """docs/reference/mfa-and-passkeys.md: an org_admin lists and changes nothing of a superadmin's,
    nor of itself; another org_admin's or a viewer's it may; outside its organization: 404."""
    admin = caller(Role.ORG_ADMIN, uid="me")
    for target in (user("root", Role.SUPERADMIN), user("me", Role.ORG_ADMIN)):
        with pytest.raises(Forbidden):
            policy.check_user_management(admin, target, op)
    policy.check_user_management(admin, user("peer", Role.ORG_ADMIN), op)
    policy.check_user_management(admin, user("someone", Role.VIEWER), op)
    with pytest.raises(NotFound):
        policy.check_user_management(admin, user("root", Role.SUPERADMIN, OTHER_ORG), op)
    root = caller(Role.SUPERADMIN, uid="root")
    policy.check_user_management(root, user("root", Role.SUPERADMIN), op)


@pytest.mark.parametrize(
    ("target", "count", "refused"),
    [
        (user("root", Role.SUPERADMIN), 1, True),
        (user("root", Role.SUPERADMIN), 2, False),
        (User("root", "r@example.com", "x", Role.SUPERADMIN, CALLER_ORG, NOW, True), 1, False),
        (user("admin", Role.ORG_ADMIN), 1, False),
    ],
    ids=["last-enabled", "another-remains", "already-disabled", "not-superadmin"],
)
def test_the_last_enabled_superadmin_cannot_be_disabled_or_deleted(
    target: User, count: int, refused: bool
) -> None:
    """``count`` is the number of enabled superadmins; a disabled one is not among them."""
    for change in ("disabled", "deleted"):
        if refused:
            with pytest.raises(LastSuperadmin, match=change):
                policy.check_keeps_a_superadmin(target, count, change)
        else:
            policy.check_keeps_a_superadmin(target, count, change)


def test_a_disabled_superadmin_may_be_demoted_while_one_enabled_remains() -> None:
    disabled_root = User("old", "o@example.com", "x", Role.SUPERADMIN, CALLER_ORG, NOW, True)
    policy.check_last_superadmin(disabled_root, Role.VIEWER, 1)


_RESOURCES = (
    Resource("https://api.acme.example", ("read", "write"), "acme"),
    Resource("https://api.globex.example", ("read",), "globex"),
    Resource("billing", ("invoice",)),
)


@pytest.mark.parametrize(
    ("audience", "scopes", "field"),
    [
        (("https://api.acme.example",), ("read",), None),
        (("https://api.acme.example", "billing"), ("write", "invoice"), None),
        (("authsvc",), ("profile:read",), None),  # auth.audience: oauth.shared_scopes
        (("authsvc", "billing"), ("profile:read",), None),
        (("authsvc",), ("anything",), "scopes"),  # not among oauth.shared_scopes
        (("authsvc", "billing"), ("invoice",), "scopes"),  # the client's tokens may be authsvc's
        (("authsvc",), ("authsvc",), "scopes"),
        (("https://api.globex.example",), ("read",), "audience"),  # another tenant's
        (("https://api.acme.example", "https://unknown.example"), (), "audience"),
        (("https://api.acme.example",), ("invoice",), "scopes"),
        (("billing",), ("read",), "scopes"),
    ],
)
def test_an_org_admin_names_only_its_and_shared_resources(
    audience: tuple[str, ...], scopes: tuple[str, ...], field: str | None
) -> None:
    admin = Principal("a", Role.ORG_ADMIN, "acme")
    shared = ("profile:read",)
    if field is None:
        policy.check_client_resources(
            admin, "acme", audience, scopes, _RESOURCES, "authsvc", shared
        )
    else:
        with pytest.raises(ValidationFailed) as raised:
            policy.check_client_resources(
                admin, "acme", audience, scopes, _RESOURCES, "authsvc", shared
            )
        assert [e.field for e in raised.value.errors] == [field]
    for anyone in (Principal("r", Role.SUPERADMIN, "acme"), policy.CLI_OPERATOR):
        policy.check_client_resources(anyone, "acme", audience, scopes, _RESOURCES, "authsvc")


def test_first_party_fields_are_a_superadmins_or_the_operators() -> None:
    """``skip_consent`` / ``all_organizations`` carried by anyone else (true or false) → 403;
    None is not carried."""
    admin = Principal("a", Role.ORG_ADMIN, "acme")
    for fields in ({"skip_consent": True}, {"all_organizations": False}):
        with pytest.raises(Forbidden):
            policy.check_first_party_fields(admin, fields)
        for anyone in (Principal("r", Role.SUPERADMIN, "acme"), policy.CLI_OPERATOR):
            policy.check_first_party_fields(anyone, fields)
    policy.check_first_party_fields(admin, {"skip_consent": None, "name": "x"})


def test_a_client_admits_and_skips_consent_only_for_its_organization() -> None:
    made = Client("c" * 32, "app", "acme", (), ("authsvc",), False, False, NOW, "h")
    first_party = attrs.evolve(made, skip_consent=True)
    everyone = attrs.evolve(first_party, all_organizations=True)
    ours = User("u", "u@example.com", "x", Role.VIEWER, "acme", NOW)
    root = User("r", "r@example.com", "x", Role.SUPERADMIN, "default", NOW)
    assert policy.client_admits_user(made, ours) and not policy.client_admits_user(made, root)
    assert policy.client_admits_user(everyone, root)
    assert policy.consent_skippable(first_party, ours)
    assert not policy.consent_skippable(made, ours)
    assert not policy.consent_skippable(everyone, root)  # asked, though admitted
