"""The authorization request (OpenID Connect Core 1.0 §3.1.2.1; OAuth 2.1 §4.1.1;
docs/reference/oauth-and-oidc.md): parse and check ``/oauth/authorize``'s parameters, in the order
that decides where an error may go.

``parse_authorize(pairs, client)`` takes the request's parameters as (name, value) pairs (the
query of a GET or the form of a POST, in order) and the client named by ``client_id`` (looked up
by the caller; None when unknown). Errors:

- ``AuthorizePageError``: a missing, repeated, unknown or disabled ``client_id``, or a missing,
  repeated or unregistered ``redirect_uri`` (RFC 6749 §4.1.2.1): the user agent gets an HTML
  error page (400) and is never redirected.
- ``AuthorizeRedirectError``: every other error, sent back to the (now trusted) ``redirect_uri``
  with ``error``, ``error_description``, ``state`` and ``iss`` (RFC 9207): ``invalid_request``
  (also for a ``response_mode`` other than ``query``, OAuth 2.0 Multiple Response Types §2.1),
  ``unsupported_response_type``, ``invalid_scope``, ``unauthorized_client``,
  ``request_not_supported``, ``request_uri_not_supported``.

Unknown parameters are ignored (OIDC §3.1.2.1); ``display``, ``ui_locales`` and
``claims_locales`` are accepted and not used.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NoReturn
from urllib.parse import urlencode

import attrs

from domain.clients import Client
from domain.oidc import IGNORED_SCOPES, OIDC_SCOPES, PKCE_CHALLENGE, redirect_uri_matches

__all__ = [
    "MAX_AGE_LIMIT",
    "PROMPTS",
    "AuthorizePageError",
    "AuthorizeRedirectError",
    "AuthorizeRequest",
    "error_redirect",
    "parse_authorize",
    "with_query",
]

PROMPTS = ("none", "login", "consent")
"""The ``prompt`` values served (``prompt_values_supported``)."""
MAX_AGE_LIMIT = 10**9
"""The largest ``max_age`` taken (seconds, about 31 years); a larger one is ``invalid_request``."""
_MAX_VALUE = 4096
"""The longest parameter value taken (characters); ``state`` and ``nonce`` are opaque to us."""
MAX_ID_TOKEN_HINT = 16_384
"""The longest ``id_token_hint`` taken (characters): an ID token signed with ML-DSA-87 (RFC
9964; a 4,627-byte signature) runs to about 6.7 kB, ML-DSA-65 to 4.9 kB."""
AUTHORIZATION_CODE = "authorization_code"


class AuthorizePageError(Exception):
    """The request cannot be answered by a redirect: show ``description`` on an error page."""

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


class AuthorizeRedirectError(Exception):
    """An error for the client (RFC 6749 §4.1.2.1): redirect to ``redirect_uri`` with
    ``error``, ``error_description`` and ``state``."""

    def __init__(self, error: str, description: str, redirect_uri: str, state: str | None) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.redirect_uri = redirect_uri
        self.state = state


@attrs.frozen
class AuthorizeRequest:
    """A checked authorization request.

    ``scopes``: the asked scopes this client may have, in the asked order (``address`` and
    ``phone`` dropped); ``prompt``: a subset of ``PROMPTS``; ``max_age`` in seconds or None;
    ``acr_values``: as asked (accepted, the login's ``acr`` is returned); ``id_token_hint``:
    the raw hint, checked by the caller with the signer; ``params``: every parameter as given,
    to send the user agent back here after a login."""

    client: Client
    redirect_uri: str
    state: str | None
    scopes: tuple[str, ...]
    code_challenge: str
    nonce: str | None
    prompt: frozenset[str]
    max_age: int | None
    login_hint: str | None
    id_token_hint: str | None
    acr_values: tuple[str, ...]
    params: tuple[tuple[str, str], ...]

    @property
    def openid(self) -> bool:
        """Whether this is an OpenID Connect request (an ID token is issued)."""
        return "openid" in self.scopes

    def query(self, **extra: str) -> str:
        """The request's parameters (with ``extra`` replacing any of the same name), as a query
        string: where to come back after a login."""
        kept = [(k, v) for k, v in self.params if k not in extra]
        return urlencode([*kept, *extra.items()])


def with_query(uri: str, params: Iterable[tuple[str, str]]) -> str:
    """``uri`` with ``params`` added to its query (RFC 6749 §3.1.2: a registered query is
    kept; with no ``params``, ``uri`` unchanged, never a trailing ``?``)."""
    pairs = list(params)
    if not pairs:
        return uri
    joiner = "&" if "?" in uri else "?"
    return uri + joiner + urlencode(pairs)


def error_redirect(error: AuthorizeRedirectError, issuer: str) -> str:
    """The Location of ``error``: ``error``, ``error_description``, ``state`` (when given) and
    ``iss`` (RFC 9207 §2)."""
    params = [("error", error.error), ("error_description", error.description)]
    if error.state is not None:
        params.append(("state", error.state))
    params.append(("iss", issuer))
    return with_query(error.redirect_uri, params)


def _single(pairs: list[tuple[str, str]], name: str) -> tuple[str | None, bool]:
    """The value of ``name`` (None when absent) and whether it was repeated."""
    values = [v for k, v in pairs if k == name]
    return (values[0] if values else None), len(values) > 1


def _trusted_target(pairs: list[tuple[str, str]], client: Client | None) -> tuple[Client, str]:
    """The client and the redirect URI an error may be sent to, or ``AuthorizePageError``."""
    client_id, repeated = _single(pairs, "client_id")
    if client_id is None or repeated:
        raise AuthorizePageError("client_id is missing or repeated")
    if client is None or client.disabled or client.id != client_id:
        raise AuthorizePageError("client_id names no client")
    uri, repeated = _single(pairs, "redirect_uri")
    if uri is None or repeated:
        raise AuthorizePageError("redirect_uri is missing or repeated")
    if not any(redirect_uri_matches(r, uri) for r in client.redirect_uris):
        raise AuthorizePageError("redirect_uri is not registered for this client")
    return client, uri


def _scopes(client: Client, raw: str | None, fail: _Fail) -> tuple[str, ...]:
    if raw is None:
        return ()
    asked = raw.split(" ")
    if "" in asked and raw != "":
        fail("invalid_request", "scope holds an empty value")
    wanted = tuple(dict.fromkeys(s for s in asked if s and s not in IGNORED_SCOPES))
    allowed = set(OIDC_SCOPES) | set(client.scopes)
    if not set(wanted) <= allowed:
        fail("invalid_scope", "the scope is not one this client may ask for")
    return wanted


def _prompt(raw: str | None, fail: _Fail) -> frozenset[str]:
    if raw is None:
        return frozenset()
    values = raw.split(" ")
    if not all(values) or not set(values) <= set(PROMPTS):
        fail("invalid_request", "prompt holds an unknown value")
    if "none" in values and len(set(values)) > 1:
        fail("invalid_request", "prompt=none may not be combined with another value")
    return frozenset(values)


def _max_age(raw: str | None, fail: _Fail) -> int | None:
    if raw is None:
        return None
    if not (raw.isascii() and raw.isdigit()) or int(raw) > MAX_AGE_LIMIT:
        fail("invalid_request", "max_age must be a number of seconds")
    return int(raw)


def _limit(name: str) -> int:
    return MAX_ID_TOKEN_HINT if name == "id_token_hint" else _MAX_VALUE


class _Fail:
    """Raises ``AuthorizeRedirectError`` to the trusted redirect URI with the request's state."""

    def __init__(self, redirect_uri: str, state: str | None) -> None:
        self.redirect_uri = redirect_uri
        self.state = state

    def __call__(self, error: str, description: str) -> NoReturn:
        raise AuthorizeRedirectError(error, description, self.redirect_uri, self.state)


def parse_authorize(pairs: list[tuple[str, str]], client: Client | None) -> AuthorizeRequest:
    """The checked request of ``pairs`` for ``client``; raises ``AuthorizePageError`` or
    ``AuthorizeRedirectError`` (see the module)."""
    client, redirect_uri = _trusted_target(pairs, client)
    state, state_repeated = _single(pairs, "state")
    fail = _Fail(redirect_uri, state if not state_repeated else None)
    names = [k for k, _ in pairs]
    repeated = sorted({k for k in names if names.count(k) > 1})
    if repeated:
        fail("invalid_request", f"the parameter {repeated[0]} is repeated")
    if any("\x00" in v or len(v) > _limit(k) for k, v in pairs):
        fail("invalid_request", "a parameter holds a NUL character or is too long")
    values = dict(pairs)
    if "request" in values:
        fail("request_not_supported", "request objects are not supported")
    if "request_uri" in values:
        fail("request_uri_not_supported", "request_uri is not supported")
    response_type = values.get("response_type")
    if response_type is None:
        fail("invalid_request", "response_type is required")
    elif response_type != "code":
        fail("unsupported_response_type", "only response_type=code is supported")
    response_mode = values.get("response_mode")
    if response_mode is not None and response_mode != "query":
        fail("invalid_request", "only response_mode=query is supported")
    if AUTHORIZATION_CODE not in client.grant_types:
        fail("unauthorized_client", "this client may not use the authorization code grant")
    scopes = _scopes(client, values.get("scope"), fail)
    challenge = values.get("code_challenge")
    method = values.get("code_challenge_method")
    if challenge is None:
        fail("invalid_request", "code_challenge is required (PKCE, S256)")
    if method != "S256":
        fail("invalid_request", "code_challenge_method must be S256")
    if challenge is None or not PKCE_CHALLENGE.fullmatch(challenge):
        fail("invalid_request", "code_challenge is malformed")
    prompt = _prompt(values.get("prompt"), fail)
    max_age = _max_age(values.get("max_age"), fail)
    acr = values.get("acr_values")
    return AuthorizeRequest(
        client=client,
        redirect_uri=redirect_uri,
        state=state,
        scopes=scopes,
        code_challenge=challenge,
        nonce=values.get("nonce"),
        prompt=prompt,
        max_age=max_age,
        login_hint=values.get("login_hint"),
        id_token_hint=values.get("id_token_hint"),
        acr_values=tuple(a for a in (acr or "").split(" ") if a),
        params=tuple(pairs),
    )
