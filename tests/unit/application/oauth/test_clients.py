"""The OAuth client registry's use cases (docs/reference/oauth-and-oidc.md): the secret shown once
and kept only as its hash, defaults, validation naming the field, updates that record what changed,
rotation with and without a grace period, and an audit row per change (no secret in it)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from adapters.events.inprocess import InProcessEventBus
from adapters.persistence.memory import MemoryStorage
from application.events.catalog import Event
from application.events.clients import ClientCreated, ClientSecretRotated, ClientUpdated
from application.oauth.clients import (
    CreateClient,
    DeleteClient,
    GetClient,
    RotateClientSecret,
    UpdateClient,
)
from application.shared.settings import AuthSettings, Live, OAuthSettings
from application.shared.steps import hash_token
from domain.audit import AuditQuery
from domain.clients import Client
from domain.errors import Forbidden, NotFound, ValidationFailed
from domain.model import Role
from domain.policy import Principal
from tests.fakes import FakeClock

ADMIN = Principal("admin", Role.ORG_ADMIN, "acme")
ROOT = Principal("root", Role.SUPERADMIN, "default")
SHARED_SCOPES = ("read", "write", "read:users", "a")
"""``oauth.shared_scopes`` of these tests: what an org_admin's clients of ``auth.audience`` may
hold."""


class Registry:
    def __init__(self, grace: int = 0) -> None:
        self.storage = MemoryStorage()
        self.bus = InProcessEventBus()
        self.clock = FakeClock()
        self.events: list[Event] = []
        self.bus.subscribe(Event, self.events.append)
        auth = Live(AuthSettings(audience="https://api.example.com"))
        oauth = Live(OAuthSettings(shared_scopes=SHARED_SCOPES))
        self.create = CreateClient(self.storage, self.bus, self.clock, auth, oauth)
        self.get = GetClient(self.storage)
        self.update = UpdateClient(self.storage, self.bus, self.clock, auth, oauth)
        self.delete = DeleteClient(self.storage, self.bus, self.clock)
        self.rotate = RotateClientSecret(
            self.storage, self.bus, self.clock, Live(OAuthSettings(secret_grace=grace))
        )

    async def stored(self, client_id: str) -> Client | None:
        async with self.storage.begin() as uow:
            return await uow.clients.get(client_id)

    async def audit_types(self) -> list[str]:
        async with self.storage.begin() as uow:
            rows = await uow.audit.list_page(AuditQuery(), None, 100)
        return sorted(r.type for r in rows)  # one fake instant: ids are not in time order


@pytest.fixture
def registry() -> Registry:
    return Registry()


async def test_the_secret_is_shown_once_and_stored_as_its_hash(registry: Registry) -> None:
    made = await registry.create(ADMIN, "  billing sync ", ["read:users", "read:users", "write"])
    client = made.client
    assert len(made.client_secret) >= 43  # 256 bits, base64url
    stored = await registry.stored(client.id)
    assert stored == client
    assert stored.secret_hash == hash_token(made.client_secret)
    assert made.client_secret not in repr(stored) and stored.secret_hash not in repr(stored)
    assert (client.name, client.org_id, client.scopes) == ("billing sync", "acme",
                                                         ("read:users", "write"))  # fmt: skip
    assert client.audience == ("https://api.example.com",)  # auth.audience by default
    assert [type(e) for e in registry.events] == [ClientCreated]
    assert await registry.audit_types() == ["client.created"]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"name": "", "scopes": ["a"]}, "name"),
        ({"name": "x", "scopes": ["has space"]}, "scopes"),
        ({"name": "x", "scopes": ['quote"']}, "scopes"),
        ({"name": "x", "scopes": "read"}, "scopes"),
        ({"name": "x", "scopes": [f"s{i}" for i in range(65)]}, "scopes"),
        ({"name": "x", "scopes": [], "audience": []}, "audience"),
        ({"name": "x", "scopes": [], "audience": ["two words"]}, "audience"),
        ({"name": "x", "scopes": [], "audience": ["a" * 513]}, "audience"),
    ],
)
async def test_bad_values_name_the_field_and_store_nothing(
    registry: Registry, kwargs: dict[str, object], field: str
) -> None:
    name, scopes = kwargs.pop("name"), kwargs.pop("scopes")
    with pytest.raises(ValidationFailed) as raised:
        await registry.create(ADMIN, name, scopes, **kwargs)  # type: ignore[arg-type]
    assert [e.field for e in raised.value.errors] == [field]
    async with registry.storage.begin() as uow:
        assert await uow.clients.list_page(None, None, 10) == []
    assert registry.events == []


async def test_an_update_records_the_fields_that_changed(registry: Registry) -> None:
    client = (await registry.create(ADMIN, "svc", ["read"])).client
    unchanged = await registry.update(ADMIN, client.id, name="svc", scopes=["read"])
    assert unchanged == client and len(registry.events) == 1  # nothing to record
    updated = await registry.update(ADMIN, client.id, scopes=["read", "write"], disabled=True)
    assert updated.scopes == ("read", "write") and updated.disabled
    assert await registry.stored(client.id) == updated
    assert registry.events[-1] == ClientUpdated(client.id, "acme", "admin", "disabled,scopes")
    with pytest.raises(ValidationFailed):
        await registry.update(ADMIN, client.id)
    with pytest.raises(ValidationFailed) as raised:
        await registry.update(ADMIN, client.id, disabled="yes")
    assert [e.field for e in raised.value.errors] == ["disabled"]


async def test_rotation_without_grace_drops_the_old_secret() -> None:
    registry = Registry(grace=0)
    made = await registry.create(ADMIN, "svc", ["read"])
    secret = await registry.rotate(ADMIN, made.client.id)
    stored = await registry.stored(made.client.id)
    assert stored is not None and secret != made.client_secret
    assert stored.secret_hashes(registry.clock.now()) == (hash_token(secret),)
    assert stored.secret_rotated_at == registry.clock.now()
    assert registry.events[-1] == ClientSecretRotated(made.client.id, "acme", "admin", 0)


async def test_rotation_with_grace_keeps_the_old_secret_for_a_while() -> None:
    registry = Registry(grace=60)
    made = await registry.create(ADMIN, "svc", ["read"])
    secret = await registry.rotate(ADMIN, made.client.id)
    stored = await registry.stored(made.client.id)
    assert stored is not None
    both = (hash_token(secret), hash_token(made.client_secret))
    assert stored.secret_hashes(registry.clock.now()) == both
    assert stored.secret_hashes(registry.clock.now() + timedelta(seconds=59)) == both
    assert stored.secret_hashes(registry.clock.now() + timedelta(seconds=60)) == both[:1]
    assert await registry.audit_types() == ["client.created", "client.secret_rotated"]


async def test_other_organizations_clients_do_not_exist_for_an_org_admin(
    registry: Registry,
) -> None:
    theirs = (await registry.create(Principal("root", Role.SUPERADMIN, "acme"), "svc", ["a"],
                                    org_id="globex")).client  # fmt: skip
    for call in (
        registry.get(ADMIN, theirs.id),
        registry.update(ADMIN, theirs.id, disabled=True),
        registry.rotate(ADMIN, theirs.id),
        registry.delete(ADMIN, theirs.id),
    ):
        with pytest.raises(NotFound):
            await call
    assert await registry.stored(theirs.id) == theirs


async def test_delete_records_and_removes(registry: Registry) -> None:
    client = (await registry.create(ADMIN, "svc", ["read"])).client
    await registry.delete(ADMIN, client.id)
    assert await registry.stored(client.id) is None
    assert await registry.audit_types() == ["client.created", "client.deleted"]
    with pytest.raises(NotFound):
        await registry.delete(ADMIN, client.id)


#  --- the code-flow fields (docs/reference/oauth-and-oidc.md)
# ---------------------------------------------

APP = {"grant_types": ["authorization_code", "refresh_token"],
       "redirect_uris": ["https://app.example/cb", "http://127.0.0.1/cb"]}  # fmt: skip


async def test_a_confidential_code_flow_client_keeps_its_fields_and_a_secret() -> None:
    r = Registry()
    made = await r.create(
        ROOT, "web app", ["read"], skip_consent=True, logo_uri="https://app.example/logo.png",
        post_logout_redirect_uris=["https://app.example/bye"],
        token_endpoint_auth_method="client_secret_post", **APP,
    )  # fmt: skip
    assert made.client_secret is not None
    stored = await r.stored(made.client.id)
    assert stored == made.client
    assert stored.grant_types == ("authorization_code", "refresh_token")
    assert stored.redirect_uris == ("https://app.example/cb", "http://127.0.0.1/cb")
    assert stored.token_endpoint_auth_method == "client_secret_post" and stored.skip_consent
    assert stored.secret_hash == hash_token(made.client_secret)


async def test_a_public_client_has_no_secret_and_auth_method_none() -> None:
    r = Registry()
    made = await r.create(ADMIN, "spa", [], public=True, redirect_uris=["https://app.example/cb"])
    assert made.client_secret is None
    client = made.client
    assert client.public and client.token_endpoint_auth_method == "none"
    assert client.grant_types == ("authorization_code",) and client.secret_hash == ""
    with pytest.raises(ValidationFailed) as raised:
        await r.rotate(ADMIN, client.id)
    assert raised.value.errors[0].field == "public"


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"grant_types": ["authorization_code"]}, "redirect_uris"),
        ({"grant_types": ["authorization_code"], "redirect_uris": ["http://app.example/cb"]},
         "redirect_uris"),
        ({**APP, "redirect_uris": ["https://app.example/cb#x"]}, "redirect_uris"),
        ({**APP, "post_logout_redirect_uris": ["/bye"]}, "post_logout_redirect_uris"),
        ({"grant_types": ["implicit"]}, "grant_types"),
        ({"grant_types": []}, "grant_types"),
        ({"grant_types": ["refresh_token"]}, "grant_types"),
        ({"public": True, **APP, "grant_types": ["client_credentials"]}, "grant_types"),
        ({"public": True, **APP, "token_endpoint_auth_method": "client_secret_basic"},
         "token_endpoint_auth_method"),
        ({"token_endpoint_auth_method": "none"}, "token_endpoint_auth_method"),
        ({"token_endpoint_auth_method": "private_key_jwt"}, "jwks"),  # RFC 7523: keys needed
        ({"token_endpoint_auth_method": "private_key_jwt", "jwks": {"keys": [{"kty": "EC"}]},
          "jwks_uri": "https://app.example/jwks"}, "jwks"),
        ({"jwks": {"keys": [{"kty": "EC", "d": "private"}]}}, "jwks"),
        ({"jwks": {"keys": []}}, "jwks"),
        ({"jwks": "not json"}, "jwks"),
        ({"jwks_uri": "http://app.example/jwks"}, "jwks_uri"),
        ({"require_pushed_authorization_requests": "yes"},
         "require_pushed_authorization_requests"),
        ({**APP, "logo_uri": "http://app.example/logo.png"}, "logo_uri"),
        ({**APP, "policy_uri": "com.example.app:/policy"}, "policy_uri"),
        ({**APP, "tos_uri": "tos"}, "tos_uri"),
        ({**APP, "id_token_signed_response_alg": "HS256"}, "id_token_signed_response_alg"),
        ({**APP, "skip_consent": "yes"}, "skip_consent"),
        ({**APP, "all_organizations": 1}, "all_organizations"),
    ],
)  # fmt: skip
async def test_bad_code_flow_fields_are_refused_naming_the_field(
    fields: dict[str, object], named: str
) -> None:
    r = Registry()
    with pytest.raises(ValidationFailed) as raised:
        await r.create(ROOT, "app", [], org_id="acme", **fields)  # type: ignore[arg-type]
    assert raised.value.errors[0].field == named


@pytest.mark.parametrize("field", ["skip_consent", "all_organizations"])
@pytest.mark.parametrize("value", [True, False, "yes"])
async def test_only_a_superadmin_or_the_operator_sets_the_first_party_fields(
    field: str, value: object
) -> None:
    """An org_admin's registration or change carrying either field (any value) is 403 before
    anything else is checked; nothing is stored or changed. A superadmin sets them."""
    r = Registry()
    with pytest.raises(Forbidden):
        await r.create(ADMIN, "app", [], **APP, **{field: value})  # type: ignore[arg-type]
    made = await r.create(ADMIN, "app", [], **APP)
    with pytest.raises(Forbidden):
        await r.update(ADMIN, made.client.id, **{field: value})
    assert await r.audit_types() == ["client.created"]
    assert await r.stored(made.client.id) == made.client
    if value is True:
        updated = await r.update(ROOT, made.client.id, **{field: True})
        assert getattr(updated, field) is True
        assert getattr(await r.stored(made.client.id), field) is True


async def test_an_org_admins_client_of_auth_audience_holds_only_the_shared_scopes() -> None:
    r = Registry()
    with pytest.raises(ValidationFailed) as raised:
        await r.create(ADMIN, "app", ["read", "authsvc"])
    assert raised.value.errors[0].field == "scopes"
    made = await r.create(ADMIN, "app", ["read"])
    with pytest.raises(ValidationFailed):
        await r.update(ADMIN, made.client.id, scopes=["authsvc"])
    assert (await r.create(ROOT, "app", ["authsvc"], org_id="acme")).client.scopes == ("authsvc",)


async def test_id_token_alg_in_auth_algorithms_is_kept() -> None:
    r = Registry()
    made = await r.create(ADMIN, "app", [], id_token_signed_response_alg="RS256", **APP)
    assert made.client.id_token_signed_response_alg == "RS256"


async def test_update_checks_the_resulting_client_as_a_whole() -> None:
    r = Registry()
    made = await r.create(ADMIN, "app", ["read"])
    with pytest.raises(ValidationFailed) as raised:
        await r.update(ADMIN, made.client.id, grant_types=["authorization_code"])
    assert raised.value.errors[0].field == "redirect_uris"
    updated = await r.update(
        ADMIN, made.client.id, grant_types=["client_credentials", "authorization_code"],
        redirect_uris=["com.example.app:/cb"],
    )  # fmt: skip
    assert updated.grant_types == ("client_credentials", "authorization_code")
    assert await r.stored(made.client.id) == updated
