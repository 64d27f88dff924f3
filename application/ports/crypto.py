"""Ports of the cryptography: password hashing, TOTP, sealing, signing, DPoP proofs.
See ``application.ports`` for the conventions every port follows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

import attrs


@attrs.frozen
class DpopProof:
    """A checked DPoP proof (RFC 9449 §4.3): ``jkt`` the RFC 7638 thumbprint of its key (what
    a token is bound to, ``cnf.jkt``), ``jti`` its unique id, ``iat`` its time (Unix s),
    ``nonce`` the server nonce it carries (RFC 9449 §8), if any."""

    jkt: str
    jti: str
    iat: int
    nonce: str | None = None


class DpopVerifier(Protocol):
    """Checks DPoP proofs (RFC 9449 §4.3) — everything but the replay of ``jti``, which needs
    storage (``ClientRepo.claim_proof_jti``)."""

    @property
    def algorithms(self) -> tuple[str, ...]:
        """The proof ``alg`` values accepted (asymmetric only), for the RFC 8414 metadata."""
        ...

    def verify(
        self,
        proof: str,
        method: str,
        urls: tuple[str, ...],
        now: datetime,
        window: int,
        *,
        access_token: str | None = None,
        jkt: str | None = None,
    ) -> DpopProof:
        """The checked proof: ``typ`` ``dpop+jwt``; ``alg`` one of ``algorithms``; a public
        ``jwk`` (no private members) that verifies the signature; ``htm`` = ``method``; ``htu``
        equal to one of ``urls`` after RFC 3986 normalisation (§6.2.2–6.2.3: scheme and host
        case, default port, percent-encoding, empty path; query and fragment dropped) — the
        caller passes URLs under the configured ``auth.issuer``, never one built from the
        request's ``Host`` (docs/reference/oauth-and-oidc.md); ``iat`` within ``window`` seconds of
        ``now``; a ``jti``. For a request to a resource with a bound token (RFC 9449 §7):
        ``access_token`` given → ``ath`` must be its base64url SHA-256; ``jkt`` given → the
        proof's key must have that thumbprint (the token's ``cnf.jkt``). Raises
        ``InvalidDpopProof`` naming the failed check."""
        ...


class Hasher(Protocol):
    """Password hashing (bcrypt). Work runs off the event loop."""

    async def hash(self, password: str) -> str:
        """A new salted hash of ``password`` at the configured cost.

        Raises ``ValueError`` for a password over 72 UTF-8 bytes (the policy refuses those first).
        """
        ...

    async def verify(self, password: str, password_hash: str | None) -> bool:
        """Constant-time check of ``password`` against ``password_hash``.

        With ``password_hash`` None it spends one check against a dummy hash of the same cost and
        returns False, so an unknown email costs the same time as a wrong password. Never raises:
        a malformed hash or a password the algorithm cannot take gives False.
        """
        ...


class Totp(Protocol):
    """Time-based one-time passwords (RFC 6238; docs/reference/mfa-and-passkeys.md): SHA-1, 6
    digits, 30 s steps. Pure computation, no I/O."""

    def new_secret(self) -> str:
        """A new random secret, base32 (RFC 4648) without padding: 32 characters, 160 bits."""
        ...

    def provisioning_uri(self, secret: str, account: str, issuer: str) -> str:
        """The ``otpauth://totp/ISSUER:ACCOUNT?secret=...&issuer=...`` URI authenticator apps
        read (the Key Uri Format), with SHA-1, 6 digits and a 30 s period."""
        ...

    def qr_svg(self, uri: str) -> str:
        """``uri`` as a QR code, an SVG document (UTF-8 text)."""
        ...

    def matching_step(self, secret: str, code: str, at: datetime, window: int = 1) -> int | None:
        """The time step (Unix time // 30) within ``window`` steps of ``at`` whose code equals
        ``code`` (compared in constant time), or None. ``code`` not 6 digits → None."""
        ...


class SecretSealer(Protocol):
    """Authenticated encryption of secrets at rest (AES-256-GCM): the TOTP secrets
    (docs/reference/mfa-and-passkeys.md). ``context`` (e.g. the user id) is bound as associated
    data, so a sealed value moved to another row does not open."""

    def seal(self, plaintext: bytes, context: bytes) -> bytes:
        """``nonce || ciphertext || tag`` of ``plaintext`` (12 + len + 16 bytes)."""
        ...

    def unseal(self, sealed: bytes, context: bytes) -> bytes:
        """The plaintext of ``seal(plaintext, context)``. Raises ``SealedSecretError`` if the
        value was not sealed with this key and context, or was altered."""
        ...

    def mac(self, data: bytes) -> bytes:
        """A MAC of ``data`` (32 bytes) under a key derived from the sealing key, the same on
        every instance sharing it: for values the server issues and later checks statelessly
        (DPoP nonces, docs/reference/oauth-and-oidc.md)."""
        ...


class SealedSecretError(Exception):
    """A sealed secret cannot be opened: another key (``auth.key_dir`` or the key-encryption key
    changed), another context, or altered bytes. An operator problem, not a client's."""


class Signer(Protocol):
    """Signs and verifies JWT access tokens (RFC 7519, RFC 7515; RS256 or ML-DSA per RFC 9964)."""

    @property
    def algorithm(self) -> str:
        """The JWS ``alg`` new tokens are signed with (``RS256``, ``ML-DSA-65``, ``ML-DSA-87``)."""
        ...

    async def sign(
        self, claims: Mapping[str, Any], *, typ: str = "JWT", alg: str | None = None
    ) -> str:
        """A compact JWS over ``claims`` with header ``{alg, typ, kid}`` (``typ``: ``JWT`` for
        user tokens, ``at+jwt`` for client tokens, RFC 9068), signed with the active key of
        ``alg`` (one of ``auth.algorithms``, docs/reference/tokens-and-sessions.md; None or an
        algorithm no longer listed: the default ``auth.algorithm``)."""
        ...

    def signing_algorithm(self, alg: str | None) -> str:
        """The JWS ``alg`` that ``sign(..., alg=alg)`` signs with now."""
        ...

    async def verify(
        self,
        token: str,
        *,
        issuer: str,
        audience: str | None,
        leeway: int,
        typ: str = "JWT",
        verify_exp: bool = True,
    ) -> dict[str, Any]:
        """The claims of a valid token; raises ``InvalidToken`` otherwise (with
        ``verify_exp`` false an expired one is valid: an ``id_token_hint``, OIDC Core §3.1.2.1).

        Rejects ``alg: none``, any algorithm not of a key in the verification set, a missing or
        unknown ``kid``, a header ``typ`` other than ``typ``, a bad signature, expiry (with
        ``leeway`` seconds), a wrong ``iss``, an ``aud`` without ``audience`` (None: any), and
        tokens lacking any of ``sub, iat, exp, iss, aud, jti``.
        """
        ...

    def jwks(self) -> dict[str, Any]:
        """The JWK Set (RFC 7517) of every public key that may still verify a live token."""
        ...


@attrs.frozen
class RelyingParty:
    """The WebAuthn relying party (docs/reference/mfa-and-passkeys.md, ``[webauthn]``): ``rp_id`` (a
    domain), ``rp_name``, the ``origins`` allowed in ``clientDataJSON``, ``user_verification``
    (``required`` or ``preferred``)."""

    rp_id: str
    rp_name: str
    origins: tuple[str, ...]
    user_verification: str = "required"


@attrs.frozen
class NewCredential:
    """A credential a registration response proved (WebAuthn L3 §7.1): the authenticator's
    ``credential_id``, the COSE ``public_key``, its ``sign_count``, the ``aaguid`` (UUID text),
    the backup flags (BE, BS) and whether the user was verified (UV)."""

    credential_id: bytes
    public_key: bytes
    sign_count: int
    aaguid: str
    backup_eligible: bool
    backed_up: bool
    user_verified: bool


@attrs.frozen
class VerifiedAssertion:
    """An assertion a login response proved (WebAuthn L3 §7.2): the credential it came from,
    the authenticator's new ``sign_count``, UV and BS flags, and the ``user_handle`` it
    returned (None when the authenticator gave none)."""

    credential_id: bytes
    sign_count: int
    user_verified: bool
    backed_up: bool
    user_handle: bytes | None


class WebAuthn(Protocol):
    """WebAuthn ceremonies (Level 3) done by a well-kept library: the options a browser passes
    to ``navigator.credentials.create()`` and the check of what it answers."""

    def registration_options(
        self,
        rp: RelyingParty,
        user_handle: bytes,
        user_name: str,
        challenge: bytes,
        exclude: Sequence[bytes],
    ) -> dict[str, Any]:
        """``PublicKeyCredentialCreationOptionsJSON`` (base64url, no padding): ``challenge``
        (32 bytes), the opaque ``user_handle``, ``excludeCredentials`` = ``exclude``,
        ``residentKey: preferred``, ``attestation: none``, algorithms Ed25519 (-8), ES256
        (-7), RS256 (-257), ``userVerification`` from ``rp``."""
        ...

    def verify_registration(
        self, rp: RelyingParty, credential: Mapping[str, Any], challenge: bytes
    ) -> NewCredential:
        """Check a ``RegistrationResponseJSON`` (WebAuthn L3 §7.1): type, ``challenge``, an
        origin of ``rp.origins``, the RP ID hash, UP, UV when ``rp`` requires it, an allowed
        algorithm. Raises ``InvalidPasskey`` naming the failed check."""
        ...

    def authentication_options(
        self, rp: RelyingParty, challenge: bytes, allow: Sequence[bytes]
    ) -> dict[str, Any]:
        """``PublicKeyCredentialRequestOptionsJSON``: ``challenge``, ``rpId``,
        ``allowCredentials`` = ``allow`` (empty: a discoverable login), ``userVerification``
        from ``rp``."""
        ...

    def verify_authentication(
        self,
        rp: RelyingParty,
        credential: Mapping[str, Any],
        challenge: bytes,
        public_key: bytes,
        sign_count: int,
    ) -> VerifiedAssertion:
        """Check an ``AuthenticationResponseJSON`` (WebAuthn L3 §7.2) against the stored
        ``public_key`` and ``sign_count``: type, ``challenge``, origin, RP ID hash, UP, UV when
        required, signature, and a counter that grows whenever the stored or the presented one
        is non-zero. Raises ``InvalidPasskey`` — with reason ``counter`` for a regression (a
        suspected clone, docs/reference/mfa-and-passkeys.md)."""
        ...


@attrs.frozen
class ClientAssertion:
    """A checked ``private_key_jwt`` client assertion (RFC 7523 §3): its ``jti`` and ``exp``
    (unix seconds), for the caller's single-use claim in storage."""

    jti: str
    exp: int


class ClientAssertionVerifier(Protocol):
    """Checks ``private_key_jwt`` client assertions (RFC 7523 §3; OpenID Connect Core 1.0 §9)
    against a client's registered keys — everything but the replay of ``jti``, which needs
    storage (``ClientRepo.claim_proof_jti``)."""

    @property
    def algorithms(self) -> tuple[str, ...]:
        """The ``alg`` values accepted (asymmetric only; never ``none`` or HMAC), for the RFC
        8414 metadata."""
        ...

    async def verify(
        self,
        assertion: str,
        client_id: str,
        jwks: str | None,
        jwks_uri: str | None,
        audiences: tuple[str, ...],
        now: datetime,
        max_lifetime: int,
    ) -> ClientAssertion:
        """The checked assertion of ``client_id``: ``alg`` one of ``algorithms``, signed by a
        key of ``jwks`` (a JWK Set's JSON) or of the set served at ``jwks_uri`` (fetched with a
        timeout and a size limit, cached a few minutes); ``iss`` = ``sub`` = ``client_id``;
        ``aud`` (a string or a list) naming one of ``audiences``; ``exp`` after ``now`` and at
        most ``max_lifetime`` seconds after it; ``jti`` a non-empty string; ``nbf`` / ``iat``
        not in the future. Raises ``InvalidClientAssertion`` (with a ``reason``) otherwise."""
        ...

    def unverified_issuer(self, assertion: str) -> str | None:
        """The ``iss`` an assertion claims, read without any check (only to find which
        client's keys to check it with); None when it is no JWT with a string ``iss``."""
        ...
