"""Rows of ``oidc_codes``, ``oidc_consents`` and ``oidc_hosted_sessions`` shared by the SQL
stores (SQLite, PostgreSQL): reading a row of ``cols.OIDC_CODES`` / ``OIDC_CONSENTS`` /
``OIDC_HOSTED`` and the parameters of a write, with the driver's time conversion passed in.
Scopes and ``amr`` are stored space-separated."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from domain.oidc import AuthorizationCode, Consent, HostedSession

ReadTime = Callable[[Any], datetime]
"""A stored time to an aware datetime (SQLite: ``from_micros``; PostgreSQL: as is)."""
WriteTime = Callable[[datetime], Any]
"""An aware datetime to its stored form (SQLite: ``to_micros``; PostgreSQL: ``require_aware``);
raises ``ValueError`` for a naive one."""


def code_row(row: Sequence[Any], when: ReadTime) -> AuthorizationCode:
    """An ``AuthorizationCode`` from a row of ``cols.OIDC_CODES``."""
    (code_hash, client_id, user_id, redirect_uri, challenge, nonce, scopes, session_id,
     auth_time, amr, acr, created_at, expires_at, used_at, family_id) = row  # fmt: skip
    return AuthorizationCode(
        code_hash, client_id, user_id, redirect_uri, challenge, nonce, tuple(scopes.split()),
        session_id, when(auth_time), tuple(amr.split()), acr, when(created_at),
        when(expires_at), None if used_at is None else when(used_at), family_id,
    )  # fmt: skip


def code_params(code: AuthorizationCode, when: WriteTime) -> tuple[Any, ...]:
    """The values of ``cols.OIDC_CODES`` for ``code``."""
    return (
        code.code_hash, code.client_id, code.user_id, code.redirect_uri, code.code_challenge,
        code.nonce, " ".join(code.scopes), code.session_id, when(code.auth_time),
        " ".join(code.amr), code.acr, when(code.created_at), when(code.expires_at),
        None if code.used_at is None else when(code.used_at), code.family_id,
    )  # fmt: skip


def consent_row(row: Sequence[Any], when: ReadTime) -> Consent:
    """A ``Consent`` from a row of ``cols.OIDC_CONSENTS``."""
    user_id, client_id, scopes, granted_at = row
    return Consent(user_id, client_id, tuple(scopes.split()), when(granted_at))


def consent_params(consent: Consent, when: WriteTime) -> tuple[Any, ...]:
    """The values of ``cols.OIDC_CONSENTS`` for ``consent`` (its scopes without repeats)."""
    scopes = " ".join(dict.fromkeys(consent.scopes))
    return (consent.user_id, consent.client_id, scopes, when(consent.granted_at))


def hosted_row(row: Sequence[Any], when: ReadTime) -> HostedSession:
    """A ``HostedSession`` from a row of ``cols.OIDC_HOSTED``."""
    id_hash, session_id, user_id, auth_time, amr, acr, idle, expires = row
    return HostedSession(
        id_hash, session_id, user_id, when(auth_time), tuple(amr.split()), acr, when(idle),
        when(expires),
    )  # fmt: skip


def hosted_params(hosted: HostedSession, when: WriteTime) -> tuple[Any, ...]:
    """The values of ``cols.OIDC_HOSTED`` for ``hosted``."""
    return (
        hosted.id_hash, hosted.session_id, hosted.user_id, when(hosted.auth_time),
        " ".join(hosted.amr), hosted.acr, when(hosted.idle_expires_at), when(hosted.expires_at),
    )  # fmt: skip
