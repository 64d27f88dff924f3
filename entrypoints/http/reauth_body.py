"""The fresh proof that the routes adding a sign-in factor read from their body (
docs/reference/mfa-and-passkeys.md; ADR 0025): ``"password"``, or ``"ceremony_id"`` +
``"credential"`` (an assertion answering ``/login/passkey/options``), or ``"provider"`` +
``"id_token"`` + ``"nonce"`` (an ID token of a linked provider, at most 300 s old), beside the
route's own members."""

from __future__ import annotations

from typing import Any, TypeVar

from aiohttp import web

from application.shared.reauth import FreshProof
from entrypoints.http.requests import read_json

T = TypeVar("T")

PROOF_PROPERTIES: dict[str, Any] = {
    "password": {"type": "string", "description": "the caller's current password"},
    "ceremony_id": {
        "type": "string",
        "description": "instead of the password: a ceremony of /login/passkey/options ...",
    },
    "credential": {
        "type": "object",
        "description": "... and its AuthenticationResponseJSON, by a passkey of the caller",
    },
    "provider": {
        "type": "string",
        "description": "instead: the id of a provider linked to the caller ...",
    },
    "id_token": {
        "type": "string",
        "description": "... an ID token it issued to the caller at most 300 s ago ...",
    },
    "nonce": {"type": "string", "description": "... and that token's nonce (spent once)"},
}
"""The OpenAPI properties of the proof (``password`` | ``ceremony_id`` + ``credential``)."""

_PROOF_MEMBERS = [
    {"required": [name]}
    for name in ("password", "ceremony_id", "credential", "provider", "id_token")
]
PROOF_ALTERNATIVES: list[dict[str, Any]] = [
    {"required": ["password"], "not": {"anyOf": _PROOF_MEMBERS[1:]}},
    {"required": ["ceremony_id", "credential"],
     "not": {"anyOf": [_PROOF_MEMBERS[0], *_PROOF_MEMBERS[3:]]}},
    {"required": ["provider", "id_token", "nonce"], "not": {"anyOf": _PROOF_MEMBERS[:3]}},
    {"not": {"anyOf": _PROOF_MEMBERS}},  # no proof at all: 401 reauthentication_required
]  # fmt: skip
"""The body's ``oneOf``: the password alone, or ceremony_id + credential together, or
provider + id_token + nonce, or none (answered 401); two kinds at once, or half of one, is
422."""

PROOF_DESCRIPTION = (
    "Needs a fresh proof of the caller (ASVS 5.0 V7.5.1): its password, or a passkey assertion"
    " (ceremony_id + credential from /login/passkey/options), or an ID token of a linked"
    " provider issued at most 300 s ago (provider + id_token + nonce); without one, or with a"
    " wrong one, 401 reauthentication_required; past auth.login_max_failures wrong ones, 429."
)


async def read_optional_json(request: web.Request, cls: type[T]) -> T:
    """``read_json(request, cls)``, or ``cls()`` when the request has no body at all (a client
    of the earlier API sending none gets 401 ``reauthentication_required``, not 400)."""
    if not request.body_exists:
        return cls()
    return await read_json(request, cls)


def proof_of(body: Any) -> FreshProof:
    """The ``FreshProof`` of a body with ``password``, ``ceremony_id``, ``credential``,
    ``provider``, ``id_token`` and ``nonce``."""
    return FreshProof(body.password, body.ceremony_id, body.credential, body.provider,
                      body.id_token, body.nonce)  # fmt: skip
