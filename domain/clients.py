"""OAuth clients (docs/reference/oauth-and-oidc.md): machines that obtain access tokens with the
client credentials grant (RFC 6749 section 4.4), registered by an org_admin or a superadmin.

A client's secret is shown once and stored only as its SHA-256 hash (ADR 0020: a secret of 256
random bits needs no slow hash). After a rotation the previous hash keeps working until
``previous_secret_expires_at`` (``oauth.secret_grace`` seconds; 0: not at all).
"""

from __future__ import annotations

import re
from datetime import datetime

import attrs

from domain.device import DEVICE_CODE_GRANT
from domain.errors import FieldError, ValidationFailed

SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,128}")
"""One scope: RFC 6749 section 3.3 ``scope-token`` (printable ASCII but space, ``"`` and
``\\``), at most 128 characters."""
GRANT_TYPES = (
    "client_credentials",
    "authorization_code",
    "refresh_token",
    DEVICE_CODE_GRANT,
)
"""The grants a client may hold (docs/reference/oauth-and-oidc.md), in this canonical order."""
TOKEN_ENDPOINT_AUTH_METHODS = (
    "client_secret_basic",
    "client_secret_post",
    "none",
    "private_key_jwt",
)
"""How a client authenticates at the token endpoint (RFC 7591 §2); ``none``: a public client."""
MAX_SCOPES = 64
"""The most scopes a client may hold."""
MAX_AUDIENCES = 16
"""The most audiences a client may hold."""
MAX_AUDIENCE_LENGTH = 512
"""The longest audience (an absolute URI or a name), in characters."""


def check_scopes(scopes: object, field: str = "scopes") -> tuple[str, ...]:
    """``scopes`` as a tuple of distinct RFC 6749 scope tokens in the given order (duplicates
    dropped). Raises ``ValidationFailed`` naming ``field`` for anything else (not a list of
    strings, a malformed token, more than ``MAX_SCOPES``)."""
    if not isinstance(scopes, list | tuple) or not all(isinstance(s, str) for s in scopes):
        raise ValidationFailed([FieldError(field, "must be a list of strings")])
    unique = tuple(dict.fromkeys(scopes))
    if len(unique) > MAX_SCOPES:
        raise ValidationFailed([FieldError(field, f"must hold at most {MAX_SCOPES} scopes")])
    for scope in unique:
        if not SCOPE_TOKEN.fullmatch(scope):
            raise ValidationFailed([FieldError(field, "holds a scope that is not a scope token")])
    return unique


def is_audience(value: str) -> bool:
    """True when ``value`` may be an audience: 1 to ``MAX_AUDIENCE_LENGTH`` printable
    characters, no space (an absolute URI or a name, docs/reference/oauth-and-oidc.md)."""
    return 0 < len(value) <= MAX_AUDIENCE_LENGTH and value.isprintable() and " " not in value


def check_audience(audience: object, field: str = "audience") -> tuple[str, ...]:
    """``audience`` as a non-empty tuple of distinct audiences (``is_audience``, at most
    ``MAX_AUDIENCES``); a string is one audience (never split into characters). Raises
    ``ValidationFailed`` naming ``field`` otherwise."""
    if isinstance(audience, str):
        audience = (audience,)
    if not isinstance(audience, list | tuple) or not all(isinstance(a, str) for a in audience):
        raise ValidationFailed([FieldError(field, "must be a string or a list of strings")])
    unique = tuple(dict.fromkeys(audience))
    if not 1 <= len(unique) <= MAX_AUDIENCES:
        raise ValidationFailed([FieldError(field, f"must hold 1 to {MAX_AUDIENCES} audiences")])
    if not all(is_audience(value) for value in unique):
        raise ValidationFailed([FieldError(field, "holds an audience that is not valid")])
    return unique


@attrs.frozen
class Resource:
    """A resource server registered by the operator (docs/reference/oauth-and-oidc.md,
    ``[[oauth.resources]]``): the ``audience`` its tokens carry (an absolute URI or a name),
    the ``scopes`` it understands, and the ``org_id`` it belongs to (None: shared by every
    organization). Checked when the configuration is read (``application.shared.settings``)."""

    audience: str
    scopes: tuple[str, ...] = ()
    org_id: str | None = None


def check_resources_of_org(
    org_id: str,
    audience: tuple[str, ...],
    scopes: tuple[str, ...],
    resources: tuple[Resource, ...],
    shared_audience: str,
    shared_scopes: tuple[str, ...] = (),
) -> None:
    """The tenants' rule for a client of ``org_id`` (docs/adr/0026, docs/adr/0036):
    each of its ``audience`` must be ``shared_audience`` (``auth.audience``) or a registered
    resource of ``org_id`` or shared by every organization. A client naming
    ``shared_audience`` may hold only ``shared_scopes`` (``oauth.shared_scopes``), since any of
    its tokens may carry that audience with any of its scopes; otherwise each of its ``scopes``
    must be understood by one of its audiences (RFC 8707 §2: a resource's own scopes).

    Raises ``ValidationFailed`` naming ``audience`` (checked first), then ``scopes``. The
    message never says whether an audience belongs to another organization."""
    usable = {r.audience: r for r in resources if r.org_id is None or r.org_id == org_id}
    if any(a != shared_audience and a not in usable for a in audience):
        raise ValidationFailed([FieldError(
            "audience", "holds an audience that is neither auth.audience nor a resource server "
            "registered for the organization or shared",
        )])  # fmt: skip
    if shared_audience in audience:
        if not set(scopes) <= set(shared_scopes):
            raise ValidationFailed([FieldError(
                "scopes", "holds a scope that is not in oauth.shared_scopes, which a client "
                "with the audience auth.audience is limited to",
            )])  # fmt: skip
        return
    understood = {s for a in audience for s in usable[a].scopes}
    if not set(scopes) <= understood:
        raise ValidationFailed([FieldError(
            "scopes", "holds a scope that none of the client's audiences understands",
        )])  # fmt: skip


@attrs.frozen
class Client:
    """A registered OAuth client (docs/reference/oauth-and-oidc.md ``Client``), with its secret's
    hashes.

    ``id``: the ``client_id`` (opaque, 32 lower-case hex characters). ``scopes``: what it may
    ask for. ``audience``: where its tokens may go (the first is the default ``aud``).
    ``require_dpop``: tokens only with a DPoP proof (RFC 9449). ``secret_hash``: SHA-256 of the
    current secret, lower-case hex; ``previous_secret_hash`` and ``previous_secret_expires_at``:
    the one before the last rotation and the end of its grace (both None when none).
    ``secret_rotated_at``: the last rotation (None: never rotated).
    ``access_token_signed_response_alg``: the JWS ``alg`` of its tokens (one of
    ``auth.algorithms``; None: by audience, else ``auth.algorithm``;
    docs/reference/tokens-and-sessions.md).

    The code flow (docs/reference/oauth-and-oidc.md): ``grant_types`` (a subset of ``GRANT_TYPES``),
    ``redirect_uris`` and ``post_logout_redirect_uris`` (exact, ``domain.oidc
    .redirect_uri_problem`` holds for none), ``public`` (no secret: ``secret_hash`` is then the
    empty string and ``token_endpoint_auth_method`` is ``"none"``),
    ``token_endpoint_auth_method`` (one of ``TOKEN_ENDPOINT_AUTH_METHODS``), ``skip_consent``
    (first-party: no consent page for users of ``org_id``), ``all_organizations`` (it signs in
    users of every organization, not only of ``org_id``; both set only by a superadmin or the
    command line, ``domain.policy.check_first_party_fields``), ``logo_uri`` / ``policy_uri``
    / ``tos_uri`` (shown on the consent page), ``id_token_signed_response_alg`` (one of
    ``auth.algorithms``; None: RS256 when allowed, else ``auth.algorithm``).
    ``require_pushed_authorization_requests``: its authorization requests must come through
    ``/oauth/par`` (RFC 9126 §6). ``jwks`` (a JWK Set, its JSON text) or ``jwks_uri`` (an https
    URL serving one): the public keys its ``private_key_jwt`` assertions are signed with (RFC
    7523; ``token_endpoint_auth_method = "private_key_jwt"``, no secret then). The defaults
    are a client-credentials client.

    Back-channel logout (OpenID Connect Back-Channel Logout 1.0 §2.2;
    docs/reference/oauth-and-oidc.md): ``backchannel_logout_uri`` (absolute https, or http on a
    loopback host; None: the client gets no logout tokens) and
    ``backchannel_logout_session_required`` (the client needs ``sid`` in them; authsvc always
    sends it).
    """

    id: str
    name: str
    org_id: str
    scopes: tuple[str, ...]
    audience: tuple[str, ...]
    require_dpop: bool
    disabled: bool
    created_at: datetime
    secret_hash: str = attrs.field(repr=False)
    secret_rotated_at: datetime | None = None
    previous_secret_hash: str | None = attrs.field(default=None, repr=False)
    previous_secret_expires_at: datetime | None = None
    access_token_signed_response_alg: str | None = None
    grant_types: tuple[str, ...] = ("client_credentials",)
    redirect_uris: tuple[str, ...] = ()
    post_logout_redirect_uris: tuple[str, ...] = ()
    public: bool = False
    token_endpoint_auth_method: str = "client_secret_basic"  # noqa: S105 - a method's name
    skip_consent: bool = False
    logo_uri: str | None = None
    policy_uri: str | None = None
    tos_uri: str | None = None
    id_token_signed_response_alg: str | None = None
    all_organizations: bool = False
    # RFC 9126 and RFC 7523 (docs/reference/oauth-and-oidc.md): pushed requests, key-based auth
    require_pushed_authorization_requests: bool = False
    jwks: str | None = None
    jwks_uri: str | None = None
    # Back-channel logout (docs/reference/oauth-and-oidc.md).
    backchannel_logout_uri: str | None = None
    backchannel_logout_session_required: bool = False

    def secret_hashes(self, now: datetime) -> tuple[str, ...]:
        """The hashes a presented secret may match at ``now``: the current one, and the
        previous one while its grace lasts."""
        if (
            self.previous_secret_hash is not None
            and self.previous_secret_expires_at is not None
            and now < self.previous_secret_expires_at
        ):
            return (self.secret_hash, self.previous_secret_hash)
        return (self.secret_hash,)
