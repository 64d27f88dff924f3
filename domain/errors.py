"""Domain exceptions. Each carries the contract's problem ``code`` (docs/reference/operations.md).

The HTTP driver maps each class to a status in exactly one middleware; the CLI prints them.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs


class DomainError(Exception):
    """Base of every error the core raises on purpose. ``code`` is the problem ``code``."""

    code: str = "error"

    def __init__(self, detail: str = "") -> None:
        super().__init__(detail or self.__class__.__doc__ or self.code)
        self.detail = detail or (self.__class__.__doc__ or self.code).strip()


@attrs.frozen
class FieldError:
    """One invalid field: ``field`` is its name (dotted when nested), ``message`` says why."""

    field: str
    message: str


class ValidationFailed(DomainError):
    """The request's fields are missing, of the wrong type, or break a policy."""

    code = "validation_error"

    def __init__(self, errors: Sequence[FieldError], detail: str = "") -> None:
        self.errors = list(errors)
        super().__init__(detail or "; ".join(f"{e.field}: {e.message}" for e in self.errors))


class InvalidCredentials(DomainError):
    """Email or password is wrong (the same answer for both: no user enumeration)."""

    code = "invalid_credentials"


class InvalidToken(DomainError):
    """The bearer token is missing, malformed, badly signed, expired or not ours (RFC 6750)."""

    code = "invalid_token"


class InvalidRefreshToken(DomainError):
    """The refresh token is unknown, expired, already used or revoked (RFC 6749 section 5.2)."""

    code = "invalid_refresh_token"


class Forbidden(DomainError):
    """Authenticated, but the role does not allow the operation."""

    code = "forbidden"


class InvalidOldPassword(DomainError):
    """The old password given for a password change is wrong."""

    code = "invalid_old_password"


class ReauthenticationRequired(DomainError):
    """Adding a sign-in factor needs a fresh proof of the user, not only a bearer token
    (docs/reference/mfa-and-passkeys.md, ASVS 5.0 V7.5.1): the request carried none, or one that
    failed — a wrong password or a refused passkey assertion (401 ``reauthentication_required``)."""

    code = "reauthentication_required"


class AccountDisabled(DomainError):
    """Login with the right password to a disabled account (docs/reference/accounts.md)."""

    code = "account_disabled"


class EmailNotVerified(DomainError):
    """Login with the right password while ``auth.require_verified_email`` is on and the email
    is not verified yet (docs/reference/accounts.md)."""

    code = "email_not_verified"


class InvalidResetToken(DomainError):
    """The password-reset token is unknown, expired, already used or voided (
    docs/reference/accounts.md)."""

    code = "invalid_reset_token"


class InvalidVerificationToken(DomainError):
    """The email-verification token is unknown, expired or already used
    (docs/reference/accounts.md)."""

    code = "invalid_verification_token"


class MfaRequired(DomainError):
    """The password was right and the user has MFA on: the login needs its second step
    (docs/reference/mfa-and-passkeys.md). ``mfa_token`` (opaque, single use, 300 s) goes with a TOTP
    or recovery code to ``/login/mfa``; it is a secret of the caller's, never logged."""

    code = "mfa_required"

    def __init__(self, mfa_token: str, detail: str = "") -> None:
        self.mfa_token = mfa_token
        super().__init__(detail or "a second factor is needed: send a code to /login/mfa")

    def __repr__(self) -> str:
        return f"MfaRequired({self.detail!r})"


class InvalidMfaCode(DomainError):
    """The second step failed: the code is wrong or already used, or the ``mfa_token`` is
    unknown, expired, used or voided (docs/reference/mfa-and-passkeys.md)."""

    code = "invalid_mfa_code"


class InvalidDpopProof(DomainError):
    """A DPoP proof (RFC 9449 §4.3) failed a check; ``reason`` names which (``malformed``,
    ``typ``, ``alg``, ``jwk``, ``signature``, ``htm``, ``htu``, ``iat``, ``jti``, ``replay``).
    Answered as the OAuth error ``invalid_dpop_proof`` (docs/reference/oauth-and-oidc.md)."""

    code = "invalid_dpop_proof"

    def __init__(self, reason: str) -> None:
        super().__init__(f"DPoP proof refused: {reason}")
        self.reason = reason


class InvalidClientAssertion(DomainError):
    """A ``private_key_jwt`` client assertion (RFC 7523 §3) failed a check; ``reason`` names
    which (``malformed``, ``alg``, ``keys``, ``jwks_uri_private``, ``signature``, ``iss``,
    ``sub``, ``aud``, ``exp``, ``jti``, ``replay``). Answered as ``invalid_client``
    (docs/reference/oauth-and-oidc.md)."""

    code = "invalid_client"

    def __init__(self, reason: str) -> None:
        super().__init__(f"client assertion refused: {reason}")
        self.reason = reason


class InvalidPasskey(DomainError):
    """A WebAuthn response failed a check (docs/reference/mfa-and-passkeys.md): its type, challenge,
    origin, RP ID hash, user presence or verification, algorithm, attestation or signature;
    ``reason`` names which, for logs and metrics only (clients get one body)."""

    code = "invalid_passkey"

    def __init__(self, reason: str) -> None:
        super().__init__("the passkey response was refused")
        self.reason = reason


class PasskeyLoginFailed(DomainError):
    """A passkey login failed a check: the credential is unknown or flagged, or its assertion
    is wrong — one answer for all (docs/reference/mfa-and-passkeys.md ``invalid_passkey``)."""

    code = "invalid_passkey"


class InvalidCeremony(DomainError):
    """A WebAuthn ceremony is unknown, used, expired, of another kind or another user's
    (docs/reference/mfa-and-passkeys.md)."""

    code = "invalid_ceremony"


class PasskeyExists(DomainError):
    """The credential id is registered already (docs/reference/mfa-and-passkeys.md)."""

    code = "passkey_exists"


class FederationFailed(DomainError):
    """A login at another identity provider failed a check of docs/reference/federation.md (state,
    ``iss``, the code exchange, the ID token, userinfo) or the provider answered an error
    (400 ``federation_failed``): one answer for every cause; nothing was created or linked."""

    code = "federation_failed"


class AccountExists(DomainError):
    """The provider's email belongs to an account this provider may not link by itself: sign
    in to that account first, then link the provider from it (409 ``account_exists``)."""

    code = "account_exists"


class FederationNotAllowed(DomainError):
    """No account matches, and this provider may not create one for this email
    (``create_users`` off, or a domain outside ``allowed_domains``; 403)."""

    code = "federation_not_allowed"


class LastLoginMethod(DomainError):
    """Unlinking this identity would leave the account no way to sign in (no password, no
    passkey, no other identity; 409 ``last_login_method``)."""

    code = "last_login_method"


class NotFound(DomainError):
    """The resource does not exist or lies outside the caller's organization."""

    code = "not_found"


class RegistrationClosed(DomainError):
    """Sign-up is closed here (``auth.allow_registration`` is false): nothing was created
    (403 ``registration_closed``)."""

    code = "registration_closed"


class EmailTaken(DomainError):
    """A user with this email (compared case-insensitively) already exists."""

    code = "email_taken"


class Conflict(DomainError):
    """The change conflicts with existing state (e.g. a duplicate group name in an org)."""

    code = "conflict"


class LastSuperadmin(DomainError):
    """The last superadmin cannot be demoted."""

    code = "last_superadmin"


class RateLimited(DomainError):
    """Too many failed logins for this email from this client address.

    ``retry_after`` is the number of whole seconds until a login may be tried again.
    """

    code = "rate_limited"

    def __init__(self, retry_after: int, detail: str = "") -> None:
        self.retry_after = max(1, int(retry_after))
        super().__init__(detail or f"too many failed logins; retry after {self.retry_after} s")


class StorageFault(DomainError):
    """The database cannot be reached or cannot write now (connection lost, server restarting
    or refusing connections, disk full, read-only, locked past the busy timeout):
    docs/reference/operations.md ``storage_unavailable``.

    Raised by the storage adapters in place of their drivers' errors; the unit of work it
    interrupted is rolled back, so nothing of it was written — except when the connection was
    lost during the commit itself, when the outcome is unknown (``detail`` says so).
    ``retry_after`` is the whole number of seconds (>= 1) a client should wait before retrying.
    """

    code = "storage_unavailable"

    def __init__(self, detail: str = "", retry_after: int = 1) -> None:
        self.retry_after = max(1, int(retry_after))
        super().__init__(detail or "the database is unavailable; retry later")


class InvalidInvitation(DomainError):
    """The invitation link is unknown, expired, revoked or used already
    (docs/reference/invitations.md): one answer for every cause; nothing was created."""

    code = "invalid_invitation"
