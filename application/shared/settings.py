"""Settings of the service, one frozen attrs class per configuration prefix
(docs/reference/configuration.md).

Read once per prefix from the TOML file and ``AUTHSVC_<PREFIX>__<KEY>`` environment variables by
``entrypoints.config`` (the infrastructure's prefixes: ``entrypoints.config.infrastructure``);
swapped as a whole by a configuration refresh. Durations are in seconds.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from email.errors import HeaderParseError
from email.headerregistry import Address
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit

import attrs
from attrs import validators as v

from application.shared.checks import check_org_id
from domain.clients import MAX_SCOPES, SCOPE_TOKEN, Resource, is_audience
from domain.errors import ValidationFailed
from domain.model import BCRYPT_MAX_PASSWORD_BYTES

ALGORITHMS = ("RS256", "ML-DSA-65", "ML-DSA-87")
"""The JWS ``alg`` values ``auth.algorithm`` accepts (RFC 7518, RFC 9964)."""
MLDSA_BACKENDS = ("cryptography", "liboqs")
"""The ``auth.mldsa_backend`` values: where ML-DSA comes from."""
KEY_STORES = ("auto", "file", "database")
"""``auth.key_store``: ``file`` (``auth.key_dir``), ``database`` (the storage's, private keys under
``auth.key_encryption_key``), ``auto`` (default: ``database`` on postgres, else ``file``)."""

_positive = v.gt(0)
_HOSTNAME = re.compile(r"(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?)+")


def url_validator(*schemes: str, optional: bool = False) -> Any:
    """attrs validator: an absolute URL with one of ``schemes`` and a host (``optional``: or
    ""); else ``ValueError`` naming the attribute. Also ``entrypoints.config.infrastructure``'s."""

    def check(_: object, attribute: attrs.Attribute[str], value: str) -> None:
        if optional and value == "":
            return
        try:
            parts = urlsplit(value)
            port = parts.port  # raises ValueError for a port that is not a number in range
        except ValueError as exc:
            raise ValueError(f"'{attribute.name}' must be a URL: {exc}") from None
        del port
        if parts.scheme not in schemes or not parts.hostname:
            raise ValueError(
                f"'{attribute.name}' must be a URL with scheme {' or '.join(schemes)} and a host,"
                f" got {value!r}"
            )

    return check


def host_validator(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    """attrs validator: an IP address or a host name (RFC 1123), else ``ValueError``."""
    try:
        ipaddress.ip_address(value)
    except ValueError:
        if not _HOSTNAME.fullmatch(value):
            raise ValueError(
                f"'{attribute.name}' must be an IP address or a host name, got {value!r}"
            ) from None


def _algorithms(
    instance: AuthSettings, attribute: attrs.Attribute[tuple[str, ...]], value: tuple[str, ...]
) -> None:
    for alg in value:
        if alg not in ALGORITHMS:
            raise ValueError(
                f"'{attribute.name}' entries must be one of {', '.join(ALGORITHMS)}, got {alg!r}"
            )
    if len(set(value)) != len(value):
        raise ValueError(f"'{attribute.name}' must not repeat an algorithm")
    if value and instance.algorithm not in value:
        raise ValueError(
            f"'{attribute.name}' must hold auth.algorithm ({instance.algorithm!r}),"
            f" got {list(value)}"
        )


def _algorithm_by_audience(
    instance: AuthSettings, attribute: attrs.Attribute[dict[str, str]], value: dict[str, str]
) -> None:
    listed = instance.signing_algorithms
    for audience, alg in value.items():
        if not audience or alg not in listed:
            raise ValueError(
                f"'{attribute.name}' maps audiences to one of auth.algorithms"
                f" ({', '.join(listed)}); {audience!r} must not map to {alg!r}"
            )


@attrs.frozen
class AuthSettings:
    """Prefix ``auth``: tokens, passwords and throttling.

    ``access_token_ttl`` (s, default 900), ``refresh_token_ttl`` (s, idle limit, default 30 days),
    ``session_max_age`` (s, absolute session lifetime from login, default 90 days), ``leeway``
    (s of clock skew accepted on verification), ``bcrypt_rounds`` (log2 cost, 4..31),
    ``login_failure_window`` (s). ``key_dir`` holds the signing keys (``~`` is expanded).

    Signing keys shared by many instances (docs/reference/operations.md; ADR 0015): ``key_store`` =
    ``file`` | ``database`` | ``auto`` (see ``KEY_STORES``); the database store encrypts private
    keys with AES-256-GCM under ``key_encryption_key`` (32 bytes, base64url) or the key read
    from the file ``key_encryption_key_file`` (one of them, not both). ``key_publish_ahead``
    (s, default 3600): a rotated key is in the JWKS that long before it signs.
    ``key_rotation_interval`` (s, 0 = never): rotate on schedule. ``key_poll_interval`` (s):
    how often an instance re-reads the key store (a fallback for missed announcements).

    Several algorithms at once (docs/reference/tokens-and-sessions.md; ADR 0030): ``algorithms``
    lists every JWS ``alg`` the service signs with (each has an active key, all are in the JWKS;
    empty, the default, means ``[algorithm]``); ``algorithm`` is the default and must be in the
    list. ``algorithm_by_audience`` maps an audience to the algorithm of its tokens (one of
    ``algorithms``).
    """

    algorithm: str = attrs.field(default="RS256", validator=v.in_(ALGORITHMS))
    algorithms: tuple[str, ...] = attrs.field(default=(), validator=_algorithms)
    """Every algorithm signed with (docs/reference/tokens-and-sessions.md); empty:
    ``(algorithm,)``."""
    algorithm_by_audience: dict[str, str] = attrs.field(
        factory=dict, validator=_algorithm_by_audience, hash=False
    )
    """Audience → the JWS ``alg`` of its tokens (docs/reference/tokens-and-sessions.md)."""
    mldsa_backend: str = attrs.field(default="cryptography", validator=v.in_(MLDSA_BACKENDS))
    issuer: str = attrs.field(
        default="http://localhost:8080", validator=url_validator("http", "https")
    )
    """The tokens' ``iss`` and the base of every URL the service names (RFC 8414 §2); read from
    a configuration it defaults to ``http://localhost:{server.port}``
    (``entrypoints.config.derived_defaults``)."""
    audience: str = attrs.field(default="authsvc", validator=v.min_len(1))
    access_token_ttl: int = attrs.field(default=900, validator=_positive)
    refresh_token_ttl: int = attrs.field(default=2_592_000, validator=_positive)
    session_max_age: int = attrs.field(default=7_776_000, validator=_positive)
    leeway: int = attrs.field(default=30, validator=v.ge(0))
    refresh_reuse_interval: int = attrs.field(default=0, validator=[v.ge(0), v.le(3600)])
    """Seconds after a rotation during which the rotated refresh token may be presented again
    and rotate once more (0, the default: off). docs/reference/tokens-and-sessions.md; ADR 0016."""
    refresh_reuse_max: int = attrs.field(default=2, validator=[v.ge(1), v.le(100)])
    """How many times one rotated token may rotate again inside the reuse interval."""
    bcrypt_rounds: int = attrs.field(default=12, validator=[v.ge(4), v.le(31)])
    password_min_length: int = attrs.field(
        default=8, validator=[v.ge(1), v.le(BCRYPT_MAX_PASSWORD_BYTES)]
    )
    login_max_failures: int = attrs.field(default=5, validator=_positive)
    login_failure_window: int = attrs.field(default=900, validator=_positive)
    default_org_id: str = attrs.field(default="default", validator=v.min_len(1))
    key_dir: str = attrs.field(default="~/.authsvc/keys", validator=v.min_len(1))
    key_store: str = attrs.field(default="auto", validator=v.in_(KEY_STORES))
    key_encryption_key: str = attrs.field(default="", repr=False)
    key_encryption_key_file: str = attrs.field(default="")
    key_publish_ahead: int = attrs.field(default=3600, validator=[v.ge(0), v.le(31_536_000)])
    key_rotation_interval: int = attrs.field(default=0, validator=[v.ge(0), v.le(315_360_000)])
    key_poll_interval: int = attrs.field(default=30, validator=[_positive, v.le(86_400)])
    password_reset_ttl: int = attrs.field(default=1800, validator=[_positive, v.le(604_800)])
    """Seconds a password-reset link works (docs/reference/accounts.md)."""
    email_verification_ttl: int = attrs.field(
        default=86_400, validator=[_positive, v.le(2_592_000)]
    )
    """Seconds an email-verification link works (docs/reference/accounts.md)."""
    invitation_ttl: int = attrs.field(default=604_800, validator=[_positive, v.le(2_592_000)])
    """Seconds an invitation link works, from its sending or latest resending (1..30 days;
    docs/reference/invitations.md)."""
    require_verified_email: bool = False
    """When true, an unverified user's login with the right password gets 403
    ``email_not_verified`` (docs/reference/accounts.md)."""
    allow_registration: bool = attrs.field(default=True, validator=v.instance_of(bool))
    """Whether anyone may create an account (``POST /register`` and the sign-up page
    ``/ui/register``, docs/guides/self-service.md); false: both answer 403
    ``registration_closed`` and change nothing."""
    mfa_issuer: str = attrs.field(
        default="authsvc",
        validator=[v.min_len(1), v.max_len(64), v.matches_re(r"[^:\x00-\x1f\x7f]+")],
    )
    """The issuer an authenticator app shows next to the account (RFC 6238 ``otpauth://`` URI,
    docs/reference/mfa-and-passkeys.md): 1..64 characters, no colon or control character."""
    mfa_token_ttl: int = attrs.field(default=300, validator=[_positive, v.le(3600)])
    """Seconds an ``mfa_token`` (a login's pending second step) works
    (docs/reference/mfa-and-passkeys.md)."""

    @property
    def signing_algorithms(self) -> tuple[str, ...]:
        """The algorithms signed with: ``algorithms``, or ``(algorithm,)`` when it is empty;
        the default ``algorithm`` first."""
        listed = self.algorithms or (self.algorithm,)
        return (self.algorithm, *(a for a in listed if a != self.algorithm))

    def algorithm_for(self, audience: str | None, client_alg: str | None = None) -> str:
        """The JWS ``alg`` of a new token (docs/reference/tokens-and-sessions.md), first match:
        ``client_alg`` (the OAuth client's ``access_token_signed_response_alg``) when it is still
        listed in ``algorithms``; ``algorithm_by_audience[audience]``; else ``algorithm``."""
        if client_alg is not None and client_alg in self.signing_algorithms:
            return client_alg
        if audience is not None and audience in self.algorithm_by_audience:
            return self.algorithm_by_audience[audience]
        return self.algorithm


EMAIL_BACKENDS = ("console", "smtp", "none")
"""The ``email.backend`` values (docs/reference/accounts.md)."""


def _link_template(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    """A link template: an http(s) URL holding ``{token}`` and no other placeholder."""
    try:
        filled = value.format(token="t")  # noqa: S106 - a placeholder, not a password
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(
            f"'{attribute.name}' may hold only the placeholder {{token}}: {exc}"
        ) from None
    if "{token}" not in value:
        raise ValueError(f"'{attribute.name}' must hold the placeholder {{token}}, got {value!r}")
    url_validator("http", "https")(None, attribute, filled)


def _smtp_host_required(
    instance: EmailSettings, attribute: attrs.Attribute[str], value: str
) -> None:
    if instance.backend == "smtp":
        if not value:
            raise ValueError(f"'{attribute.name}' must be set when email.backend is smtp")
        host_validator(instance, attribute, value)


def _address(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    """An RFC 5322 addr-spec (``name@domain``; a local domain such as ``localhost`` is fine),
    checked by the standard library's header parser."""
    try:
        parsed = Address(addr_spec=value)
    except (ValueError, IndexError, HeaderParseError) as exc:
        raise ValueError(f"'{attribute.name}' must be an email address: {exc}") from None
    if not parsed.username or not parsed.domain:
        raise ValueError(f"'{attribute.name}' must be an email address, got {value!r}")


@attrs.frozen
class EmailSettings:
    """Prefix ``email`` (docs/reference/accounts.md): how messages leave the service.

    ``backend`` = ``console`` (the default, for development: each message, with its link, is
    written to the service's log) | ``smtp`` (``smtp_host``, ``smtp_port``, ``smtp_username`` and
    ``smtp_password`` (both or neither), ``smtp_starttls``, ``smtp_timeout`` seconds) | ``none``
    (nothing is sent). ``from_address`` is the sender; ``verify_url`` and ``reset_url`` are the
    links in the messages, templates holding ``{token}`` (read from a configuration, they
    default to the hosted pages ``{auth.issuer}/ui/verify?token={token}`` and
    ``{auth.issuer}/ui/reset?token={token}``: ``entrypoints.config.derived_defaults``);
    ``verify_subject`` and ``reset_subject`` the subjects. ``change_url`` (default
    ``{auth.issuer}/ui/account/email/confirm?token={token}``) is the link mailed to a new
    address to confirm an email change, ``change_subject`` its subject, ``changed_subject`` the
    subject of the notice to the old address (docs/reference/accounts.md). ``smtp_password`` is
    never shown or logged.
    """

    backend: str = attrs.field(default="console", validator=v.in_(EMAIL_BACKENDS))
    smtp_host: str = attrs.field(default="", validator=_smtp_host_required)
    smtp_port: int = attrs.field(default=587, validator=[v.ge(1), v.le(65535)])
    smtp_username: str = ""
    smtp_password: str = attrs.field(default="", repr=False)
    smtp_starttls: bool = True
    smtp_timeout: float = attrs.field(default=10.0, validator=[v.gt(0), v.le(300)])
    from_address: str = attrs.field(default="authsvc@localhost", validator=_address)
    verify_url: str = attrs.field(
        default="http://localhost:8080/ui/verify?token={token}", validator=_link_template
    )
    reset_url: str = attrs.field(
        default="http://localhost:8080/ui/reset?token={token}", validator=_link_template
    )
    verify_subject: str = attrs.field(
        default="Confirm your email address", validator=[v.min_len(1), v.max_len(200)]
    )
    reset_subject: str = attrs.field(
        default="Reset your password", validator=[v.min_len(1), v.max_len(200)]
    )
    change_url: str = attrs.field(
        default="http://localhost:8080/ui/account/email/confirm?token={token}",
        validator=_link_template,
    )
    change_subject: str = attrs.field(
        default="Confirm your new email address", validator=[v.min_len(1), v.max_len(200)]
    )
    changed_subject: str = attrs.field(
        default="Your email address was changed", validator=[v.min_len(1), v.max_len(200)]
    )

    def __attrs_post_init__(self) -> None:
        if bool(self.smtp_username) != bool(self.smtp_password):
            raise ValueError("'smtp_username' and 'smtp_password' must be set together")
        subjects = ("verify_subject", "reset_subject", "change_subject", "changed_subject")
        for name in (*subjects, "from_address"):
            if any(ch in getattr(self, name) for ch in "\r\n"):
                raise ValueError(f"'{name}' must be one line")


@attrs.frozen
class AuditSettings:
    """Prefix ``audit`` (docs/reference/operations.md): ``retention_days`` (days, 1..36500, default
    90): audit events older than that are purged by the housekeeping task and ``authsvc purge``."""

    retention_days: int = attrs.field(default=90, validator=[v.ge(1), v.le(36_500)])


def _resources(
    _: object, attribute: attrs.Attribute[tuple[Resource, ...]], value: tuple[Resource, ...]
) -> None:
    """``oauth.resources``: each entry's ``audience`` an audience (``is_audience``) found in no
    other entry, its ``scopes`` at most ``MAX_SCOPES`` RFC 6749 scope tokens, its ``org_id``
    absent or an organization id. Raises ``ValueError`` naming the key and the entry."""
    seen: set[str] = set()
    for number, resource in enumerate(value, start=1):
        entry = f"'{attribute.name}' entry {number}"
        if not is_audience(resource.audience):
            raise ValueError(f"{entry}: 'audience' must be an absolute URI or a name (1 to 512 "
                             "printable characters, no space)")  # fmt: skip
        if resource.audience in seen:
            raise ValueError(f"{entry}: the audience {resource.audience!r} must be registered once")
        seen.add(resource.audience)
        if len(resource.scopes) > MAX_SCOPES or not all(
            SCOPE_TOKEN.fullmatch(scope) for scope in resource.scopes
        ):
            raise ValueError(f"{entry}: 'scopes' must be at most {MAX_SCOPES} scope tokens "
                             "(RFC 6749 §3.3)")  # fmt: skip
        if resource.org_id is not None:
            try:
                check_org_id(resource.org_id)
            except ValidationFailed as exc:
                raise ValueError(f"{entry}: 'org_id' {exc.errors[0].message}") from None


def _scope_tokens(_: object, attribute: attrs.Attribute[tuple[str, ...]],
                  value: tuple[str, ...]) -> None:  # fmt: skip
    """At most ``MAX_SCOPES`` distinct RFC 6749 §3.3 scope tokens. Raises ``ValueError``
    naming the key."""
    if (
        len(value) > MAX_SCOPES
        or len(set(value)) != len(value)
        or not all(SCOPE_TOKEN.fullmatch(scope) for scope in value)
    ):
        raise ValueError(f"'{attribute.name}' must be at most {MAX_SCOPES} distinct scope "
                         "tokens (RFC 6749 §3.3)")  # fmt: skip


@attrs.frozen
class OAuthSettings:
    """Prefix ``oauth`` (docs/reference/oauth-and-oidc.md): ``client_token_ttl`` (s, 1..86400,
    default 300): the lifetime of a client credentials access token; ``secret_grace`` (s,
    0..2592000, default 0): how long a client's previous secret keeps working after a rotation;
    ``dpop_nonce`` (bool, default false): DPoP proofs at the token endpoint must carry a server
    nonce (RFC 9449 §8), answered in ``DPoP-Nonce`` and valid for 60 to 120 s.

    ``resources`` (default none): the resource servers an org_admin's clients may name as
    audiences (docs/reference/oauth-and-oidc.md; ``[[oauth.resources]]`` tables of ``audience``,
    ``scopes`` and optional ``org_id``, absent for one shared by every organization; the
    ``Resource`` of ``domain.clients``). ``auth.audience`` is always one more, shared; it may
    not be registered here (``entrypoints.config``). ``shared_scopes`` (default none, at most
    ``MAX_SCOPES`` RFC 6749 §3.3 scope tokens): the only scopes an org_admin's client naming
    ``auth.audience`` may hold (docs/adr/0036); a superadmin's clients are not limited.

    ``allow_private_jwks_uri`` (bool, default false): true lets a client's ``jwks_uri`` name
    ``localhost`` or a loopback, private or link-local address (``http`` on a loopback host
    too) and be fetched wherever its name resolves — for development and tests only; false:
    such a URI is 422 at registration and change, and a name resolving only to such
    addresses fails the assertion (docs/adr/0055-jwks-uri-address-rule.md)."""

    client_token_ttl: int = attrs.field(default=300, validator=[v.ge(1), v.le(86_400)])
    secret_grace: int = attrs.field(default=0, validator=[v.ge(0), v.le(2_592_000)])
    dpop_nonce: bool = False
    resources: tuple[Resource, ...] = attrs.field(default=(), validator=_resources)
    shared_scopes: tuple[str, ...] = attrs.field(default=(), validator=_scope_tokens)
    allow_private_jwks_uri: bool = attrs.field(default=False, validator=v.instance_of(bool))


T = TypeVar("T")
U = TypeVar("U")


class Live(Generic[T]):
    """The settings object in force; ``replace`` swaps it whole (a configuration refresh).

    Use cases read ``.current`` on each call, so a change applies to the next request. The
    service keeps **one** ``Live[Config]`` (the whole configuration in force) and hands out
    per-prefix views of it (``live_config.view(attrgetter("auth"))`` → ``Live[AuthSettings]``), so
    every reader sees the same configuration and a refresh has one thing to swap (ADR 0011).
    """

    def __init__(self, value: T) -> None:
        self._value = value

    @property
    def current(self) -> T:
        """The settings in force now."""
        return self._value

    def replace(self, value: T) -> None:
        """Put ``value`` in force."""
        self._value = value

    def view(self, select: Callable[[T], U]) -> Live[U]:
        """A read-only ``Live`` of a part of this value: its ``current`` is
        ``select(self.current)``, read afresh each time, so it follows every ``replace`` of
        this one. Its own ``replace`` raises ``TypeError`` (swap the source instead)."""
        return _View(self, select)


class _View(Live[U]):
    """``Live.view``: a part of another ``Live``, never stored apart from it."""

    def __init__(self, source: Live[Any], select: Callable[[Any], U]) -> None:
        self._source = source
        self._select = select

    @property
    def current(self) -> U:
        """``select(source.current)``, now."""
        return self._select(self._source.current)

    def replace(self, value: U) -> None:
        """Refused: a view has no value of its own. Raises ``TypeError``."""
        raise TypeError("a view of the settings in force is read-only; replace its source")
