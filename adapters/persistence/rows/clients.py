"""Rows of ``oauth_clients`` shared by the SQL client registries (SQLite, PostgreSQL): the
column list, reading a row and the parameters of a write. ``scopes`` is stored space-separated
(RFC 6749 section 3.3), ``audience``, ``grant_types``, ``redirect_uris`` and
``post_logout_redirect_uris`` as JSON arrays."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from domain.clients import Client

CLIENTS = (
    "id, name, org_id, scopes, audience, require_dpop, disabled, created_at, secret_hash,"
    " secret_rotated_at, previous_secret_hash, previous_secret_expires_at,"
    " access_token_signed_response_alg, grant_types, redirect_uris, post_logout_redirect_uris,"
    " public, token_endpoint_auth_method, skip_consent, logo_uri, policy_uri, tos_uri,"
    " id_token_signed_response_alg, all_organizations,"
    " require_pushed_authorization_requests, jwks, jwks_uri,"
    " backchannel_logout_uri, backchannel_logout_session_required"
)
"""The columns of ``oauth_clients`` in the order of ``Client``'s fields."""
CLIENT_UPDATE = (
    "name, org_id, scopes, audience, require_dpop, disabled, created_at, secret_hash,"
    " secret_rotated_at, previous_secret_hash, previous_secret_expires_at,"
    " access_token_signed_response_alg, grant_types, redirect_uris, post_logout_redirect_uris,"
    " public, token_endpoint_auth_method, skip_consent, logo_uri, policy_uri, tos_uri,"
    " id_token_signed_response_alg, all_organizations,"
    " require_pushed_authorization_requests, jwks, jwks_uri,"
    " backchannel_logout_uri, backchannel_logout_session_required"
)
"""Every column of ``oauth_clients`` but ``id``, in ``CLIENTS`` order."""


def client_row(row: Sequence[Any], when: Callable[[Any], datetime | None]) -> Client:
    """A ``Client`` from a row of ``CLIENTS``; ``when`` converts a stored time (None stays
    None)."""
    (id_, name, org_id, scopes, audience, dpop, disabled, created_at, secret_hash, rotated_at,
     previous_hash, previous_expires_at, alg, grants, redirects, logout_redirects, public,
     auth_method, skip_consent, logo_uri, policy_uri, tos_uri, id_token_alg,
     all_organizations, require_par, jwks, jwks_uri, backchannel_uri,
     backchannel_sid) = row  # fmt: skip
    created = when(created_at)
    assert created is not None
    return Client(
        id_, name, org_id, tuple(scopes.split()), tuple(json.loads(audience)), bool(dpop),
        bool(disabled), created, secret_hash, when(rotated_at), previous_hash,
        when(previous_expires_at), alg, tuple(json.loads(grants)), tuple(json.loads(redirects)),
        tuple(json.loads(logout_redirects)), bool(public), auth_method, bool(skip_consent),
        logo_uri, policy_uri, tos_uri, id_token_alg, bool(all_organizations),
        bool(require_par), jwks, jwks_uri, backchannel_uri, bool(backchannel_sid),
    )  # fmt: skip


def _json(values: tuple[str, ...]) -> str:
    return json.dumps(list(values), separators=(",", ":"))


def client_params(client: Client, when: Callable[[datetime], Any]) -> tuple[Any, ...]:
    """The values of ``CLIENTS`` for ``client``; ``when`` converts a time to its stored form
    (None stays None)."""

    def at(value: datetime | None) -> Any:
        return None if value is None else when(value)

    return (
        client.id, client.name, client.org_id, " ".join(client.scopes),
        _json(client.audience), client.require_dpop,
        client.disabled, at(client.created_at), client.secret_hash, at(client.secret_rotated_at),
        client.previous_secret_hash, at(client.previous_secret_expires_at),
        client.access_token_signed_response_alg, _json(client.grant_types),
        _json(client.redirect_uris), _json(client.post_logout_redirect_uris), client.public,
        client.token_endpoint_auth_method, client.skip_consent, client.logo_uri,
        client.policy_uri, client.tos_uri, client.id_token_signed_response_alg,
        client.all_organizations, client.require_pushed_authorization_requests, client.jwks,
        client.jwks_uri, client.backchannel_logout_uri,
        client.backchannel_logout_session_required,
    )  # fmt: skip
