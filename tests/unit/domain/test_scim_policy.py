"""Who may provision over SCIM (``domain.policy.scim_principal``, docs/adr/0050): the client's
organization, an org_admin's rights, the ``scim`` scope in the token and still in the client."""

from __future__ import annotations

from datetime import UTC, datetime

import attrs
import pytest

from domain import policy
from domain.clients import Client
from domain.errors import Forbidden, InvalidToken, NotFound
from domain.model import Role, User
from domain.policy import Operation, scim_principal

NOW = datetime(2026, 1, 1, tzinfo=UTC)
CLIENT = Client("c" * 32, "idp", "acme", ("scim",), ("authsvc",), False, False, NOW, "h")


def test_the_principal_is_an_org_admin_of_the_clients_organization_named_after_it() -> None:
    made = scim_principal(CLIENT, ["scim"])
    assert (made.role, made.org_id) == (Role.ORG_ADMIN, "acme")
    assert made.actor_id == "scim:" + CLIENT.id


def test_it_acts_inside_its_organization_only_and_never_on_a_superadmin() -> None:
    made = scim_principal(CLIENT, ["scim"])
    with pytest.raises(NotFound):
        policy.require_in_scope(made, "globex", "user")
    boss = User("u" * 32, "b@example.com", "", Role.SUPERADMIN, "acme", NOW)
    with pytest.raises(Forbidden):
        policy.check_user_management(made, boss, Operation.DISABLE_USER)
    with pytest.raises(Forbidden):
        policy.require(made, Operation.MOVE_USER)


@pytest.mark.parametrize("scopes", [[], ["read"], ["scim:read"], ["SCIM"]])
def test_a_token_without_the_scim_scope_is_forbidden(scopes: list[str]) -> None:
    with pytest.raises(Forbidden):
        scim_principal(CLIENT, scopes)


def test_a_client_that_no_longer_holds_the_scope_is_forbidden_even_with_an_old_token() -> None:
    with pytest.raises(Forbidden):
        scim_principal(attrs.evolve(CLIENT, scopes=("read",)), ["scim"])


@pytest.mark.parametrize(
    "client",
    [None, attrs.evolve(CLIENT, disabled=True), attrs.evolve(CLIENT, all_organizations=True)],
)
def test_a_gone_disabled_or_every_organization_client_is_refused(client: Client | None) -> None:
    with pytest.raises(InvalidToken):
        scim_principal(client, ["scim"])
