"""The code-flow fields of a client (docs/reference/oauth-and-oidc.md), checked for the registry's
create and change: each value alone (``check_code_flow_values``), then the client as a whole
(``check_code_flow_client``). Every refusal is ``ValidationFailed`` (422) naming the field."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from application.shared.checks import invalid
from application.shared.settings import AuthSettings
from domain.clients import GRANT_TYPES, TOKEN_ENDPOINT_AUTH_METHODS, Client
from domain.device import DEVICE_CODE_GRANT
from domain.network import is_local_host
from domain.oidc import MAX_REDIRECT_URI_LENGTH, redirect_uri_problem

__all__ = [
    "CLEAR",
    "CLEARABLE_FIELDS",
    "CODE_FLOW_FIELDS",
    "MAX_REDIRECT_URIS",
    "check_code_flow_client",
    "check_code_flow_values",
    "check_jwks",
    "check_jwks_uri",
    "checked_alg",
]

MAX_REDIRECT_URIS = 16
"""The most ``redirect_uris`` (and ``post_logout_redirect_uris``) a client may hold."""
CODE_FLOW_FIELDS = (
    "grant_types", "redirect_uris", "post_logout_redirect_uris", "token_endpoint_auth_method",
    "skip_consent", "all_organizations", "logo_uri", "policy_uri", "tos_uri",
    "id_token_signed_response_alg",
    # RFC 9126 and RFC 7523 (docs/reference/oauth-and-oidc.md)
    "require_pushed_authorization_requests", "jwks", "jwks_uri",
    # Back-channel logout (OpenID Connect Back-Channel Logout 1.0 §2.2).
    "backchannel_logout_uri", "backchannel_logout_session_required",
)  # fmt: skip
"""The code-flow fields a registration or a change may carry (``public`` is fixed at
registration: a client never gains or loses its secret)."""
CLEARABLE_FIELDS = ("jwks", "jwks_uri")
"""The fields a change may set back to none (``CLEAR``; a JSON ``null`` in ``PATCH
/oauth/clients/{client_id}``)."""


class _Clear:
    """The type of ``CLEAR``."""

    def __repr__(self) -> str:
        return "CLEAR"


CLEAR: Any = _Clear()
"""A change's value for "set this field back to none" (only ``CLEARABLE_FIELDS``); absent or
None means "unchanged"."""
_URI_FIELDS = ("logo_uri", "policy_uri", "tos_uri", "backchannel_logout_uri")
_NONE = "none"


def checked_alg(alg: Any, settings: AuthSettings, field: str) -> str | None:
    """A JWS ``alg`` checked against ``auth.algorithms`` (docs/reference/tokens-and-sessions.md):
    None stays None; another value not listed → ``ValidationFailed`` naming ``field``."""
    if alg is None:
        return None
    listed = settings.signing_algorithms
    if not isinstance(alg, str) or alg not in listed:
        raise invalid(field, f"must be one of auth.algorithms: {', '.join(listed)}")
    return alg


def _strings(value: Any, field: str, most: int) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise invalid(field, "must be a list of strings")
    unique = tuple(dict.fromkeys(value))
    if len(unique) > most:
        raise invalid(field, f"must hold at most {most} values")
    return unique


def _redirect_uris(value: Any, field: str) -> tuple[str, ...]:
    uris = _strings(value, field, MAX_REDIRECT_URIS)
    for uri in uris:
        problem = redirect_uri_problem(uri)
        if problem is not None:
            raise invalid(field, f"holds a URI that {problem}")
    return uris


def _web_uri(value: Any, field: str) -> str:
    """An absolute ``https`` URI, or ``http`` on a loopback host (a page the consent screen
    links to or an image it shows)."""
    if not isinstance(value, str):
        raise invalid(field, "must be a string")
    problem = redirect_uri_problem(value)
    scheme = urlsplit(value).scheme.lower() if problem is None else ""
    if (
        problem is not None
        or scheme not in ("https", "http")
        or len(value) > MAX_REDIRECT_URI_LENGTH
    ):
        raise invalid(field, "must be an absolute https URI (http only on a loopback host)")
    return value


def check_jwks_uri(value: Any, *, allow_private: bool) -> str:
    """A client's ``jwks_uri`` (docs/reference/oauth-and-oidc.md): an absolute ``https`` URI
    without a fragment, at most ``MAX_REDIRECT_URI_LENGTH`` characters. Unless
    ``allow_private`` (``oauth.allow_private_jwks_uri``), its host must not be ``localhost``
    nor an IP literal on a loopback, private, link-local or other non-public network
    (``domain.network.is_local_host``; names are checked again after DNS resolution at each
    fetch, docs/adr/0055-jwks-uri-address-rule.md); with it, ``http`` on a loopback host is
    taken too. Returns the URI; ``ValidationFailed`` naming ``jwks_uri`` otherwise."""
    uri = _web_uri(value, "jwks_uri")
    if allow_private:
        return uri
    parts = urlsplit(uri)
    if parts.scheme.lower() != "https" or is_local_host(parts.hostname or ""):
        raise invalid(
            "jwks_uri", "must be an https URI not on a loopback, private or link-local address"
        )
    return uri


def check_code_flow_values(
    values: dict[str, Any], settings: AuthSettings, *, allow_private_jwks_uri: bool = False
) -> dict[str, Any]:
    """Each code-flow value of ``values`` checked alone (absent ones stay absent, None values
    of the optional URIs and algorithm stay None): ``grant_types`` a non-empty subset of
    ``GRANT_TYPES`` (canonical order), ``redirect_uris`` / ``post_logout_redirect_uris`` at
    most ``MAX_REDIRECT_URIS`` registrable URIs (``redirect_uri_problem``),
    ``token_endpoint_auth_method`` one of ``TOKEN_ENDPOINT_AUTH_METHODS``, ``skip_consent`` and
    ``all_organizations``, ``require_pushed_authorization_requests`` and
    ``backchannel_logout_session_required`` booleans, the URIs absolute https (http on a
    loopback host) without a fragment (``backchannel_logout_uri`` as OpenID Connect
    Back-Channel Logout 1.0 §2.2 asks), ``jwks_uri`` as ``check_jwks_uri`` (its address rule
    lifted by ``allow_private_jwks_uri``: ``oauth.allow_private_jwks_uri``), ``jwks`` a JWK Set
    of public keys (``check_jwks``), ``id_token_signed_response_alg`` in ``auth.algorithms``.
    Returns the checked values."""
    out = dict(values)
    if "grant_types" in out:
        grants = _strings(out["grant_types"], "grant_types", len(GRANT_TYPES))
        if not grants or not set(grants) <= set(GRANT_TYPES):
            raise invalid("grant_types", f"must be a non-empty subset of {', '.join(GRANT_TYPES)}")
        out["grant_types"] = tuple(g for g in GRANT_TYPES if g in grants)
    for field in ("redirect_uris", "post_logout_redirect_uris"):
        if field in out:
            out[field] = _redirect_uris(out[field], field)
    method = out.get("token_endpoint_auth_method")
    if "token_endpoint_auth_method" in out and method not in TOKEN_ENDPOINT_AUTH_METHODS:
        raise invalid(
            "token_endpoint_auth_method", f"must be one of {', '.join(TOKEN_ENDPOINT_AUTH_METHODS)}"
        )
    for field in (
        "skip_consent",
        "all_organizations",
        "require_pushed_authorization_requests",
        "backchannel_logout_session_required",
    ):
        if field in out and not isinstance(out[field], bool):
            raise invalid(field, "must be a boolean")
    for field in _URI_FIELDS:
        if out.get(field) is not None:
            out[field] = _web_uri(out[field], field)
    if out.get("jwks") is not None:
        out["jwks"] = check_jwks(out["jwks"])
    if out.get("jwks_uri") is not None:
        out["jwks_uri"] = check_jwks_uri(out["jwks_uri"], allow_private=allow_private_jwks_uri)
    if "id_token_signed_response_alg" in out:
        out["id_token_signed_response_alg"] = checked_alg(
            out["id_token_signed_response_alg"], settings, "id_token_signed_response_alg"
        )
    return out


def check_code_flow_client(client: Client) -> None:
    """The rules across fields (docs/reference/oauth-and-oidc.md), on the client as it would be
    stored: the ``authorization_code`` grant needs at least one redirect URI (422 naming
    ``redirect_uris``); ``refresh_token`` comes only with ``authorization_code`` or the device
    code grant (RFC 8628); a public client
    authenticates with ``none`` and cannot hold ``client_credentials``; a confidential one never
    with ``none`` (422 naming ``token_endpoint_auth_method`` or ``grant_types``);
    ``private_key_jwt`` needs exactly one of ``jwks`` and ``jwks_uri`` (422 naming ``jwks``; a
    change clearing both, or the one it has, is refused the same way)."""
    grants = set(client.grant_types)
    if "authorization_code" in grants and not client.redirect_uris:
        raise invalid(
            "redirect_uris", "must hold at least one URI for the authorization_code grant"
        )
    if "refresh_token" in grants and not grants & {"authorization_code", DEVICE_CODE_GRANT}:
        raise invalid("grant_types", "refresh_token needs authorization_code or device_code")
    if client.public:
        if client.token_endpoint_auth_method != _NONE:
            raise invalid("token_endpoint_auth_method", "must be none for a public client")
        if "client_credentials" in grants:
            raise invalid("grant_types", "a public client cannot use client_credentials")
    elif client.token_endpoint_auth_method == _NONE:
        raise invalid("token_endpoint_auth_method", "none is only for a public client")
    if client.token_endpoint_auth_method == PRIVATE_KEY_JWT and (
        (client.jwks is None) == (client.jwks_uri is None)
    ):
        raise invalid("jwks", "private_key_jwt needs exactly one of jwks and jwks_uri")


PRIVATE_KEY_JWT = "private_key_jwt"
"""RFC 7523 client authentication: an assertion signed with one of the client's keys."""
MAX_JWKS_LENGTH = 16_384
"""The longest ``jwks`` taken (characters of its JSON)."""
MAX_JWKS_KEYS = 10
_PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})


def check_jwks(value: Any) -> str:
    """A client's ``jwks`` (RFC 7517 §5): a JSON object (or its text) with ``keys``, 1 to
    ``MAX_JWKS_KEYS`` objects each with a string ``kty`` and no private or symmetric member
    (``d``, ``p``, ``q``, ``dp``, ``dq``, ``qi``, ``oth``, ``k``). Returns its compact JSON
    text; ``ValidationFailed`` naming ``jwks`` otherwise. The keys themselves are parsed when
    an assertion is checked."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise invalid("jwks", "must be a JWK Set") from None
    keys = value.get("keys") if isinstance(value, dict) else None
    if (
        not isinstance(keys, list)
        or not 1 <= len(keys) <= MAX_JWKS_KEYS
        or not all(isinstance(k, dict) and isinstance(k.get("kty"), str) for k in keys)
    ):
        raise invalid("jwks", f"must be a JWK Set of 1 to {MAX_JWKS_KEYS} keys")
    if any(_PRIVATE_MEMBERS & set(k) for k in keys):
        raise invalid("jwks", "must hold public keys only")
    text = json.dumps({"keys": keys}, separators=(",", ":"), sort_keys=True)
    if len(text) > MAX_JWKS_LENGTH:
        raise invalid("jwks", f"must be at most {MAX_JWKS_LENGTH} characters of JSON")
    return text
