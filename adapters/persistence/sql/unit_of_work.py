"""The SQL unit of work: the stores of ``sql.stores`` over one backend unit (SQLite's
``SqliteWriteUnit`` or ``SqliteReadUnit``, PostgreSQL's ``PostgresUnit``), ADR 0039."""

from __future__ import annotations

from adapters.persistence.sql.queries import SqlUnit
from adapters.persistence.sql.stores.audit import SqlAuditLog
from adapters.persistence.sql.stores.clients import SqlClientRepo
from adapters.persistence.sql.stores.device import SqlDeviceGrantStore
from adapters.persistence.sql.stores.email_tokens import SqlEmailTokenStore
from adapters.persistence.sql.stores.identities import SqlFederatedIdentityRepo
from adapters.persistence.sql.stores.invitations import SqlInvitationRepo
from adapters.persistence.sql.stores.mfa import SqlMfaStore
from adapters.persistence.sql.stores.oidc import (
    SqlAuthorizationCodeStore,
    SqlConsentStore,
    SqlHostedSessionStore,
)
from adapters.persistence.sql.stores.outbox import SqlOutboxStore
from adapters.persistence.sql.stores.passkeys import SqlPasskeyRepo
from adapters.persistence.sql.stores.pushed import SqlPushedRequestStore
from adapters.persistence.sql.stores.scim import SqlScimRecordStore
from adapters.persistence.sql.stores.tokens import SqlSessionStore, SqlTokenStore
from adapters.persistence.sql.stores.users import SqlGroupRepo, SqlUserRepo
from adapters.persistence.sql.stores.webhooks import SqlWebhookRepo
from application.ports import UnitOfWork


class SqlUnitOfWork(UnitOfWork):
    """``UnitOfWork``: one transaction of ``unit`` (begun at the first statement).

    ``commit()`` commits the changes so far; the next statement begins the next transaction:
    the unit goes on, and later changes need another ``commit()``. Raises ``StorageFault``
    (on PostgreSQL when the connection is lost during the commit, the outcome is then unknown).
    """

    def __init__(self, unit: SqlUnit) -> None:
        self._unit = unit
        self.users = SqlUserRepo(unit)
        self.tokens = SqlTokenStore(unit)
        self.sessions = SqlSessionStore(unit)
        self.groups = SqlGroupRepo(unit)
        self.email_tokens = SqlEmailTokenStore(unit)
        self.mfa = SqlMfaStore(unit)
        self.audit = SqlAuditLog(unit)
        self.clients = SqlClientRepo(unit)
        self.passkeys = SqlPasskeyRepo(unit)
        self.codes = SqlAuthorizationCodeStore(unit)
        self.consents = SqlConsentStore(unit)
        self.hosted_sessions = SqlHostedSessionStore(unit)
        self.identities = SqlFederatedIdentityRepo(unit)
        self.invitations = SqlInvitationRepo(unit)
        self.device_grants = SqlDeviceGrantStore(unit)
        self.pushed_requests = SqlPushedRequestStore(unit)
        self.outbox = SqlOutboxStore(unit)
        self.webhooks = SqlWebhookRepo(unit)
        self.scim = SqlScimRecordStore(unit)

    async def commit(self) -> None:
        """Make every change of this unit durable at once."""
        await self._unit.commit()
