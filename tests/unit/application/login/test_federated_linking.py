"""The linking rules of docs/reference/federation.md as a table: an identity (issuer, ``sub``) seen
for the first time, its provider trusted for emails or not, the email verified by the provider or
not, and the local user with that email (none, a password user, a user of another provider) →
a new user (its email verified or not), a link, or a refusal — through ``federated_login`` over
memory storage and a provider client that proves whatever identity it is given."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pytest

from application.events.catalog import LoginSucceeded, UserRegistered
from application.events.federation import IdentityLinked
from domain import errors
from domain.federation import FederatedIdentity, UpstreamIdentity
from domain.model import User
from tests.unit.application.harness import (
    ADDRESS,
    FakeUpstream,
    Harness,
    build_harness,
    federation,
    provider,
)

EMAIL = "alice@example.com"
ISSUER = "https://idp.example"
OTHER_ISSUER = "https://other.example"


def _harness(tmp_path: Path, **fields: Any) -> tuple[Harness, FakeUpstream]:
    """A harness with provider ``idp`` (``fields``) and a trusted provider ``other``."""
    settings = federation(provider("idp", **fields), provider("other", trust_email=True))
    harness = build_harness(tmp_path, federation=settings)
    return harness, harness.upstream


async def _local(harness: Harness, kind: str) -> User | None:
    """The local user with ``EMAIL``: ``none``, ``password`` (verified), ``unverified`` (a
    password user who never proved the email), ``federated`` (created by provider ``other``,
    no password)."""
    if kind == "none":
        return None
    if kind == "federated":
        user = await harness.add_user(EMAIL, password=None)
        identity = FederatedIdentity(OTHER_ISSUER, "o-1", "other", user.id, EMAIL,
                                     harness.clock.now(), email_was_verified=True)  # fmt: skip
        async with harness.storage.begin() as uow:
            await uow.identities.add(identity)
            await uow.commit()
        return user
    return await harness.add_user(EMAIL, email_verified=kind == "password")


async def _native(harness: Harness, provider_id: str = "idp") -> Any:
    login = harness.container.federated_login()
    return await login.native(provider_id, "id-token", secrets.token_urlsafe(), ADDRESS, "ua")


async def _users(harness: Harness) -> list[User]:
    async with harness.storage.read() as uow:
        return await uow.users.list_page(None, None, 100)


# (trust_email, the provider says email_verified, the local user) → the outcome.
LINKING = [
    (True, True, "none", "create verified"),
    (True, False, "none", "create unverified"),
    (False, True, "none", "create unverified"),
    (False, False, "none", "create unverified"),
    (True, True, "password", "link"),
    (True, False, "password", "account_exists"),
    (False, True, "password", "account_exists"),
    (False, False, "password", "account_exists"),
    (True, True, "unverified", "account_exists"),
    (True, True, "federated", "link"),
    (True, False, "federated", "account_exists"),
    (False, True, "federated", "account_exists"),
    (False, False, "federated", "account_exists"),
]


@pytest.mark.parametrize(
    ("trust_email", "email_verified", "local_kind", "expected"),
    [pytest.param(*row, id="-".join(map(str, row))) for row in LINKING],
)
async def test_an_unknown_identity_is_created_linked_or_refused(
    tmp_path: Path, trust_email: bool, email_verified: bool, local_kind: str, expected: str
) -> None:
    harness, upstream = _harness(tmp_path, trust_email=trust_email)
    local = await _local(harness, local_kind)
    before = await _users(harness)
    upstream.identity = UpstreamIdentity(ISSUER, "sub-1", EMAIL, email_verified)
    if expected == "account_exists":
        with pytest.raises(errors.AccountExists):
            await _native(harness)
        assert await _users(harness) == before
        assert harness.recorder.of(IdentityLinked) == []
        async with harness.storage.read() as uow:
            assert await uow.identities.find(ISSUER, "sub-1") is None
        return
    assert (await _native(harness)).access_token
    async with harness.storage.read() as uow:
        identity = await uow.identities.find(ISSUER, "sub-1")
        user = await uow.users.get_by_email(EMAIL)
    assert identity is not None and user is not None and identity.user_id == user.id
    [succeeded] = harness.recorder.of(LoginSucceeded)
    assert (succeeded.user_id, succeeded.method, succeeded.provider) == (
        user.id,
        "federated",
        "idp",
    )
    if expected == "link":
        assert local is not None and user.id == local.id
        assert harness.recorder.of(IdentityLinked) == [
            IdentityLinked(user.id, "idp", "trusted_email")
        ]
        assert harness.recorder.of(UserRegistered) == []
    else:
        assert user.email_verified is (expected == "create verified")
        assert user.password_hash == ""
        assert harness.recorder.of(IdentityLinked) == [IdentityLinked(user.id, "idp", "created")]
        assert harness.recorder.of(UserRegistered) == [UserRegistered(user.id, user.org_id)]


@pytest.mark.parametrize(
    ("fields", "email"),
    [
        pytest.param({"create_users": False}, EMAIL, id="create_users off"),
        pytest.param({"allowed_domains": ("corp.example",)}, EMAIL, id="domain not allowed"),
        pytest.param({}, None, id="the provider gave no email"),
    ],
)
async def test_no_account_is_created_when_the_provider_may_not(
    tmp_path: Path, fields: dict[str, Any], email: str | None
) -> None:
    harness, upstream = _harness(tmp_path, trust_email=True, **fields)
    upstream.identity = UpstreamIdentity(ISSUER, "sub-1", email, True)
    with pytest.raises(errors.FederationNotAllowed):
        await _native(harness)
    assert await _users(harness) == []


async def test_a_new_user_goes_to_the_providers_organization(tmp_path: Path) -> None:
    harness, upstream = _harness(tmp_path, org_id="acme")
    upstream.identity = UpstreamIdentity(ISSUER, "sub-1", EMAIL, True)
    await _native(harness)
    [user] = await _users(harness)
    assert user.org_id == "acme"


async def test_a_known_identity_signs_its_user_in_whatever_its_email_now(tmp_path: Path) -> None:
    """The identity is (issuer, ``sub``), never the email: a known one signs its user in even
    when the provider now gives another user's email."""
    harness, upstream = _harness(tmp_path, trust_email=True)
    upstream.identity = UpstreamIdentity(ISSUER, "sub-1", EMAIL, True)
    await _native(harness)
    [alice] = await _users(harness)
    bob = await harness.add_user("bob@example.com")
    upstream.identity = UpstreamIdentity(ISSUER, "sub-1", bob.email, True)
    await _native(harness)
    assert [e.user_id for e in harness.recorder.of(LoginSucceeded)] == [alice.id, alice.id]
    assert len(harness.recorder.of(IdentityLinked)) == 1
