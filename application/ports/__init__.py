"""Ports: the Protocols the use cases depend on. Adapters implement them and nothing else.

Each adapter names the port it implements as a base class (``class SqliteUserRepo(UserRepo)``),
so the type checker holds its signatures to the port's. Adapters translate their drivers' errors
(sqlite3, asyncpg, OpenSSL ...) into the errors named here before they cross the port; each
method's docstring lists every error an adapter may raise. All times are timezone-aware UTC
datetimes: a naive one is a programming error, which the SQL adapters refuse with ``ValueError``.

Storage comes in two ports: ``Storage`` is the backend with a lifetime (open, ping, close) that
``begin()``s units of work; a ``UnitOfWork`` is one transaction holding the repositories.

Storage faults (docs/reference/operations.md, ADR 0014): every method of ``Storage.begin``, the
repositories, ``UnitOfWork.commit`` and ``LoginAttempts`` may also raise ``StorageFault``
(``domain.errors``) when the database cannot be reached or cannot write — the connection lost,
the server restarting or refusing connections, the disk full, the file read-only, a lock held
past the busy timeout. The unit of work it interrupts is rolled back, so nothing of it was
written, except that a connection lost during the commit itself leaves the outcome unknown.
Use cases let it through; the HTTP edge answers it 503 ``storage_unavailable`` with
``Retry-After``. The adapters heal by themselves: the first request after the fault ends works.
"""

from __future__ import annotations

from application.ports.accounts import EmailTokenStore, SessionStore, TokenStore, UserRepo
from application.ports.crypto import (
    ClientAssertion,
    ClientAssertionVerifier,
    DpopProof,
    DpopVerifier,
    Hasher,
    NewCredential,
    RelyingParty,
    SealedSecretError,
    SecretSealer,
    Signer,
    Totp,
    VerifiedAssertion,
    WebAuthn,
)
from application.ports.device import DeviceGrantStore
from application.ports.federation import (
    FederatedIdentityRepo,
    FederationFailed,
    ProbeState,
    ProviderProbe,
    ProviderProbes,
    UpstreamClient,
)
from application.ports.invitations import InvitationRepo
from application.ports.oidc import AuthorizationCodeStore, ConsentStore, HostedSessionStore
from application.ports.outbox import DeliveryFailed, HttpSender, OutboxStore
from application.ports.pushed import PushedRequestStore
from application.ports.records import AuditLog, ClientRepo, GroupRepo, MfaStore, PasskeyRepo
from application.ports.scim import ScimKind, ScimRecordStore
from application.ports.services import (
    Clock,
    EmailMessage,
    EmailNormalizer,
    EmailNotSent,
    EmailSender,
    EventBus,
    MailDraft,
    MailTemplateError,
    MailWriter,
)
from application.ports.storage import AttemptClaim, LoginAttempts, Storage, UnitOfWork
from application.ports.webhooks import WebhookRepo, WebhookSigner

__all__ = [
    "AttemptClaim",
    "AuditLog",
    "AuthorizationCodeStore",
    "ClientAssertion",
    "ClientAssertionVerifier",
    "ClientRepo",
    "Clock",
    "ConsentStore",
    "DeliveryFailed",
    "DeviceGrantStore",
    "DpopProof",
    "DpopVerifier",
    "EmailMessage",
    "EmailNormalizer",
    "EmailNotSent",
    "EmailSender",
    "EmailTokenStore",
    "EventBus",
    "FederatedIdentityRepo",
    "FederationFailed",
    "GroupRepo",
    "Hasher",
    "HostedSessionStore",
    "HttpSender",
    "InvitationRepo",
    "LoginAttempts",
    "MailDraft",
    "MailTemplateError",
    "MailWriter",
    "MfaStore",
    "NewCredential",
    "OutboxStore",
    "PasskeyRepo",
    "ProbeState",
    "ProviderProbe",
    "ProviderProbes",
    "PushedRequestStore",
    "RelyingParty",
    "ScimKind",
    "ScimRecordStore",
    "SealedSecretError",
    "SecretSealer",
    "SessionStore",
    "Signer",
    "Storage",
    "TokenStore",
    "Totp",
    "UnitOfWork",
    "UpstreamClient",
    "UserRepo",
    "VerifiedAssertion",
    "WebAuthn",
    "WebhookRepo",
    "WebhookSigner",
]
