"""The world of the accounts tests over HTTP (docs/reference/accounts.md), shared by
``tests/e2e/http/test_users.py``, ``test_roles.py``, ``test_groups.py``, the console's tests
and the browser tests: a fresh app with a superadmin ``root``, two organizations each holding a
viewer target, a group and its member, an OAuth client, a passkey and a session
(``make_world``); callers logged in per role (``log_in_as``); a ``snapshot`` of everything, to
check that a refused request changed nothing.

Users, roles and groups are set up through the container's use cases (the operator's CLI use
cases and a superadmin principal); the callers log in over HTTP. The fixtures ``deployment``
(once per storage backend), ``shared_key_dir`` and ``base_env`` (one key directory per module)
are imported by the modules that use this world.
"""

from __future__ import annotations

import os
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import pytest
from aiohttp.test_utils import TestClient

from domain.model import Role
from domain.passkeys import Passkey
from domain.policy import Principal
from entrypoints.container import Container
from tests.e2e.helpers import (
    ONE_PER_BACKEND,
    PASSWORD,
    container_of,
)

HOME = "default"


OTHER = "acme"


NOWHERE = "nowhere"


MISSING_ID = "0" * 32


ROOT = "root@example.com"


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend. Access decisions do not depend on
    the signing algorithm (every algorithm's tokens are covered by the auth and signer suites),
    and the matrix is the largest suite, so it runs on SQLite and PostgreSQL with RS256."""
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def shared_key_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One key directory for the whole module: RSA key generation runs once, not per app."""
    return tmp_path_factory.mktemp("keys") / "keys"


@pytest.fixture
def base_env(storage_env: dict[str, str], shared_key_dir: Path, algorithm: str) -> dict[str, str]:
    """As in conftest, but with the shared key directory (each test still has its own db), and
    ``read`` in ``oauth.shared_scopes`` (an org_admin's clients of ``auth.audience`` may hold
    it)."""
    return {
        "AUTHSVC_OAUTH__SHARED_SCOPES": "read",
        "AUTHSVC_AUTH__BCRYPT_ROUNDS": "4",
        "AUTHSVC_AUTH__KEY_DIR": str(shared_key_dir),
        "AUTHSVC_AUTH__ALGORITHM": algorithm,
        **storage_env,
    }


@attrs.frozen
class OrgFixture:
    """What one organization holds: a viewer ``target``, a ``group`` and its ``member``, an
    OAuth ``oauth_client``."""

    org_id: str
    target: str
    group: str
    member: str
    oauth_client: str
    passkey: str = MISSING_ID
    session: str = MISSING_ID


@attrs.define
class World:
    """A fresh app with a superadmin ``root``, two organizations set up and callers logged in."""

    client: TestClient
    root: Principal
    orgs: dict[str, OrgFixture]
    tokens: dict[str, str] = attrs.field(factory=dict)
    user_ids: dict[str, str] = attrs.field(factory=dict)

    @property
    def container(self) -> Container:
        return container_of(self.client)


async def add_user(client: TestClient, email: str, role: Role = Role.VIEWER,
                   org_id: str = HOME) -> str:  # fmt: skip
    """Register ``email`` and give it ``role`` and ``org_id`` through the operator's use cases."""
    container = container_of(client)
    user = await container.auth_service().register(email, PASSWORD)
    if org_id != HOME:
        await container.set_org_by_operator()(email, org_id)
    if role is not Role.VIEWER:
        await container.set_role_by_operator()(email, role)
    return user.id


async def login(client: TestClient, email: str, password: str = PASSWORD) -> dict[str, Any]:
    """Log in over HTTP; the TokenPair body."""
    resp = await client.post("/login", json={"email": email, "password": password})
    assert resp.status == 200, await resp.text()
    return await resp.json()  # type: ignore[no-any-return]


async def add_passkey(client: TestClient, user_id: str) -> str:
    """A passkey of ``user_id`` stored through the port; returns its id."""
    passkey = Passkey(uuid.uuid4().hex, user_id, os.urandom(16), b"key", 0, "0" * 36, False,
                      False, (), "laptop", datetime.now(UTC))  # fmt: skip
    async with container_of(client).storage().begin() as uow:
        await uow.passkeys.add(passkey)
        await uow.commit()
    return passkey.id


async def make_world(client: TestClient) -> World:
    """root (superadmin of ``HOME``, logged in); in ``HOME`` and ``OTHER``: a viewer target, a
    group and a member of it."""
    container = container_of(client)
    root = (await container.create_superadmin()(ROOT, PASSWORD)).user
    principal = Principal(root.id, root.role, root.org_id)
    orgs = {}
    for scope, org in (("same", HOME), ("other", OTHER)):
        target = await add_user(client, f"target@{org}.example", org_id=org)
        await login(client, f"target@{org}.example")  # a live session to list or end
        member = await add_user(client, f"member@{org}.example", org_id=org)
        group = await container.create_group()(principal, f"team-{org}", org)
        await container.add_member()(principal, group.group.id, member)
        made = await container.create_client()(principal, f"svc-{org}", ["read"], org_id=org)
        passkey = await add_passkey(client, target)
        session = (await container.list_sessions()(principal, target))[0].session.id
        orgs[scope] = OrgFixture(
            org, target, group.group.id, member, made.client.id, passkey, session
        )
    orgs["missing"] = OrgFixture(NOWHERE, MISSING_ID, MISSING_ID, MISSING_ID, MISSING_ID)
    world = World(client, principal, orgs)
    world.tokens["superadmin"] = (await login(client, ROOT))["access_token"]
    world.user_ids["superadmin"] = root.id
    return world


async def log_in_as(world: World, role: str) -> str:
    """An access token of a caller with ``role`` in ``HOME`` (root for superadmin)."""
    if role not in world.tokens:
        email = f"{role}@{HOME}.example"
        world.user_ids[role] = await add_user(world.client, email, Role(role))
        world.tokens[role] = (await login(world.client, email))["access_token"]
    return world.tokens[role]


async def snapshot(world: World) -> dict[str, Any]:
    """Every user (role, org, disabled), its live sessions, every group (name, org, members)
    and every OAuth client (org, disabled, secret hash), read through the use cases."""
    c = world.container
    listed = (await c.list_users()(world.root, limit=200)).items
    users = {u.id: (u.email, u.role, u.org_id, u.disabled) for u in listed}
    sessions = {
        u.id: [x.session.id for x in await c.list_sessions()(world.root, u.id)] for u in listed
    }
    groups = {}
    for summary in (await c.list_groups()(world.root, limit=200)).items:
        detail = await c.get_group()(world.root, summary.group.id)
        groups[summary.group.id] = (summary.group.name, summary.group.org_id,
                                    sorted(m.id for m in detail.members))  # fmt: skip
    clients = {x.id: (x.org_id, x.disabled, x.secret_hash)
               for x in (await c.list_clients()(world.root, limit=200)).items}  # fmt: skip
    passkeys = {u.id: [p.id for p in await c.passkey_admin().list(world.root, u.id)]
                for u in listed}  # fmt: skip
    return {"users": users, "groups": groups, "sessions": sessions, "clients": clients,
            "passkeys": passkeys}  # fmt: skip
