"""Rows of ``federated_identities`` and ``federation_flows`` ↔ the domain objects, for both
SQL backends; ``time`` converts a stored time (SQLite: microseconds; PostgreSQL: as is)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from domain.federation import FederatedIdentity, FederationFlow, UpstreamIdentity

Convert = Callable[[Any], Any]


def identity_params(identity: FederatedIdentity, time: Convert) -> tuple[Any, ...]:
    """The values of ``sql.identities.INSERT``."""
    last = None if identity.last_used_at is None else time(identity.last_used_at)
    return (identity.issuer, identity.subject, identity.provider, identity.user_id,
            identity.email, time(identity.linked_at), last,
            identity.email_was_verified)  # fmt: skip


def identity_row(row: Sequence[Any], time: Convert) -> FederatedIdentity:
    issuer, subject, provider, user_id, email, linked_at, last_used_at, verified = row
    last: datetime | None = None if last_used_at is None else time(last_used_at)
    return FederatedIdentity(issuer, subject, provider, user_id, email, time(linked_at), last,
                             bool(verified))  # fmt: skip


def flow_params(flow: FederationFlow, time: Convert) -> tuple[Any, ...]:
    """The values of ``sql.identities.INSERT_FLOW``."""
    up = flow.upstream
    return (flow.state_hash, flow.provider, flow.browser_hash, flow.nonce, flow.code_verifier,
            flow.return_to, flow.link_user_id, time(flow.created_at),
            time(flow.expires_at), None if up is None else up.issuer,
            None if up is None else up.subject, None if up is None else up.email,
            flow.invitation_hash)  # fmt: skip


def flow_row(row: Sequence[Any], time: Convert) -> FederationFlow:
    (state_hash, provider, browser_hash, nonce, verifier, return_to, link_user_id, created_at,
     expires_at, up_issuer, up_subject, up_email, invitation_hash) = row  # fmt: skip
    upstream = None
    if up_issuer is not None and up_subject is not None:
        upstream = UpstreamIdentity(up_issuer, up_subject, up_email)
    return FederationFlow(state_hash, provider, browser_hash, nonce, verifier, return_to,
                          link_user_id, time(created_at), time(expires_at),
                          upstream, invitation_hash)  # fmt: skip
