"""The emails behind the audit rows' ids (``application.console.people``, docs/reference/console.md)
over the in-memory storage: an org_admin learns the emails of its own organization's users only;
a superadmin every one; a missing id stays unnamed; viewer and operator are refused."""

from __future__ import annotations

import pytest

from adapters.persistence.memory import MemoryStorage
from application.console.people import MAX_LOOKED_UP, AuditPeople
from domain.errors import Forbidden
from domain.model import Role
from domain.policy import Principal
from tests.factories import Make


@pytest.fixture
async def people() -> tuple[AuditPeople, dict[str, str]]:
    make, storage = Make(), MemoryStorage()
    users = [make.user("a1", "a1@a.example", org_id="org-a"),
             make.user("b1", "b1@b.example", Role.SUPERADMIN, org_id="org-b")]  # fmt: skip
    async with storage.begin() as uow:
        for user in users:
            await uow.users.add(user)
        await uow.commit()
    return AuditPeople(storage), {u.id: u.email for u in users}


async def test_an_org_admin_sees_the_emails_of_its_org_only(
    people: tuple[AuditPeople, dict[str, str]],
) -> None:
    lookup, emails = people
    admin = Principal("x", Role.ORG_ADMIN, "org-a")
    assert await lookup(admin, ["a1", "b1", None, "a1", "gone"]) == {"a1": emails["a1"]}


async def test_a_superadmin_sees_every_email(people: tuple[AuditPeople, dict[str, str]]) -> None:
    lookup, emails = people
    root = Principal("r", Role.SUPERADMIN, "org-b")
    assert await lookup(root, ["a1", "b1", "gone"]) == emails


@pytest.mark.parametrize("role", [Role.VIEWER, Role.OPERATOR])
async def test_viewer_and_operator_are_refused(
    people: tuple[AuditPeople, dict[str, str]], role: Role
) -> None:
    with pytest.raises(Forbidden):
        await people[0](Principal("x", role, "org-a"), ["a1"])


async def test_at_most_max_looked_up_ids(people: tuple[AuditPeople, dict[str, str]]) -> None:
    lookup = people[0]
    root = Principal("r", Role.SUPERADMIN, "org-b")
    many = [f"0{n:05d}" for n in range(MAX_LOOKED_UP)] + ["a1"]  # "a1" sorts after them
    assert await lookup(root, many) == {}
