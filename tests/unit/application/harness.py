"""The service's use cases as the container wires them, over memory storage, a fixed clock and
the lowest bcrypt cost: for the unit tests of the OAuth provider and the login paths, with no
HTTP server and no process.

Tests ask the ``Container`` (``entrypoints.container``) for use cases by their provider names
(``authorize``, ``code_flow_grants``, ``hosted_login``, ``auth_service``, ``mfa_login``,
``passkey_login``, ``federated_login``...), so they follow the wiring when modules move. Only
the clock (a ``FakeClock``) and the identity-provider client (a ``FakeUpstream``: no test
reaches a network) are overridden; users and clients are written to the storage directly.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from datetime import timedelta
from pathlib import Path
from typing import Any

import attrs
from dependency_injector import providers

from adapters.events.inprocess import InProcessEventBus
from adapters.persistence.memory import MemoryStorage
from application.federation.settings import FederationSettings, ProviderSettings
from application.ports import FederationFailed
from application.shared.settings import AuthSettings
from domain.clients import Client
from domain.federation import UpstreamIdentity, UpstreamProvider
from domain.model import Role, User
from entrypoints.config import Config
from entrypoints.config.infrastructure import StorageSettings
from entrypoints.container import Container
from tests.fakes import FakeClock, Recorder

PASSWORD = "correct horse battery"
ADDRESS = "192.0.2.7"
REDIRECT_URI = "https://app.example/cb"
ORG = "default"


def pkce_pair() -> tuple[str, str]:
    """A PKCE verifier and its S256 challenge (RFC 7636 §4.2)."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@attrs.define
class FakeUpstream:
    """An ``UpstreamClient`` (application.ports) whose ID tokens all prove ``identity`` (set it
    before a login), issued by ``clock``'s now and valid five minutes."""

    clock: FakeClock
    identity: UpstreamIdentity | None = None

    async def verify_id_token(
        self, provider: UpstreamProvider, id_token: str, nonce: str | None
    ) -> UpstreamIdentity:
        """``identity`` with ``iat`` now; ``FederationFailed`` when none is set."""
        if self.identity is None:
            raise FederationFailed("id_token_invalid")
        now = self.clock.now()
        return attrs.evolve(self.identity, issued_at=now, expires_at=now + timedelta(minutes=5))

    async def authorization_url(self, *args: Any) -> str:
        """Fails as an unreachable provider (the browser flow is tested over HTTP)."""
        raise FederationFailed("discovery_failed")

    async def announces_iss(self, provider: UpstreamProvider) -> bool:
        return False

    async def redeem(self, *args: Any) -> UpstreamIdentity:
        """Fails as a refused code exchange (the browser flow is tested over HTTP)."""
        raise FederationFailed("exchange_failed")

    async def check(self, provider: UpstreamProvider) -> None:
        return None


@attrs.define
class Harness:
    """One container over memory storage with a ``FakeClock``; ``recorder`` holds every event
    published on its bus; ``upstream`` is its identity-provider client."""

    container: Container
    clock: FakeClock
    recorder: Recorder
    upstream: FakeUpstream

    @property
    def storage(self) -> MemoryStorage:
        storage = self.container.storage()
        assert isinstance(storage, MemoryStorage)
        return storage

    async def add_user(
        self,
        email: str = "alice@example.com",
        *,
        org_id: str = ORG,
        disabled: bool = False,
        email_verified: bool = True,
        mfa_enabled: bool = False,
        password: str | None = PASSWORD,
    ) -> User:
        """Store a viewer with ``password`` hashed by the container's hasher (None: no
        password, as a user created by a provider's login)."""
        hashed = "" if password is None else await self.container.hasher().hash(password)
        user = User(
            id=secrets.token_hex(16), email=email, password_hash=hashed, role=Role.VIEWER,
            org_id=org_id, created_at=self.clock.now(), disabled=disabled,
            email_verified=email_verified, mfa_enabled=mfa_enabled,
        )  # fmt: skip
        async with self.storage.begin() as uow:
            await uow.users.add(user)
            await uow.commit()
        return user

    async def update_user(self, user: User, **changes: Any) -> User:
        """Store ``user`` as stored now with ``changes`` (``disabled``, ``email_verified``...)."""
        async with self.storage.begin() as uow:
            current = await uow.users.get(user.id)
            assert current is not None
            changed = attrs.evolve(current, **changes)
            await uow.users.update(changed)
            await uow.commit()
        return changed

    async def add_client(self, **fields: Any) -> Client:
        """Store a confidential code-flow client of ``ORG`` redirecting to ``REDIRECT_URI``,
        with ``fields`` replacing any default."""
        values: dict[str, Any] = {
            "id": secrets.token_hex(16), "name": "app", "org_id": ORG,
            "scopes": ("offline_access",), "audience": (), "require_dpop": False,
            "disabled": False, "created_at": self.clock.now(),
            "secret_hash": hashlib.sha256(b"secret").hexdigest(),
            "grant_types": ("authorization_code", "refresh_token"),
            "redirect_uris": (REDIRECT_URI,),
        }  # fmt: skip
        values.update(fields)
        client = Client(**values)
        async with self.storage.begin() as uow:
            await uow.clients.add(client)
            await uow.commit()
        return client

    async def sign_in(self, user: User, client_id: str | None = None) -> str:
        """A hosted session of ``user`` by its password (``hosted_login``): the cookie value."""
        hosted = self.container.hosted_login()
        return str(await hosted.password(user.email, PASSWORD, ADDRESS, "ua", client_id))


def build_harness(tmp_path: Path, *, auth: dict[str, Any] | None = None, **config: Any) -> Harness:
    """A ``Harness`` whose ``Config`` has memory storage, bcrypt cost 4, ML-DSA-65 signing keys
    (generated in milliseconds, unlike RSA) in ``tmp_path``, the ``auth`` settings given, and
    ``config`` (prefix name → settings object) replacing any other prefix; its identity-provider
    client is ``harness.upstream``."""
    settings = AuthSettings(
        bcrypt_rounds=4, algorithm="ML-DSA-65", key_dir=str(tmp_path / "keys"), **(auth or {})
    )
    prefixes: dict[str, Any] = {"auth": settings, "storage": StorageSettings(backend="memory")}
    prefixes.update(config)
    container = Container(config=providers.Object(Config(**prefixes)))
    clock = FakeClock()
    container.clock.override(providers.Object(clock))
    upstream = FakeUpstream(clock)
    container.upstream_client.override(providers.Object(upstream))
    bus = container.bus()
    assert isinstance(bus, InProcessEventBus)
    return Harness(container, clock, Recorder(bus), upstream)


def provider(provider_id: str = "idp", **fields: Any) -> ProviderSettings:
    """An OIDC provider at ``https://{provider_id}.example`` with ``fields`` (``trust_email``,
    ``create_users``...)."""
    return ProviderSettings(
        id=provider_id, name=provider_id, client_id="rp", issuer=f"https://{provider_id}.example",
        **fields,
    )  # fmt: skip


def federation(*providers_: ProviderSettings) -> FederationSettings:
    """``FederationSettings`` with ``providers_``."""
    return FederationSettings(providers=providers_)
