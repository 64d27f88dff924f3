"""Access-token claims and the refresh-token lifecycle: issue, rotate, detect reuse, revoke.

Implements docs/reference/tokens-and-sessions.md ("Access token", "Refresh token"), RFC 6749 section
6 (refresh), RFC 9700 section 4.14.2 (rotation with reuse detection) and RFC 7519 (claims).
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

import attrs

from application.events.audit import record as record_audit
from application.events.catalog import (
    AccessTokenIssued,
    Event,
    RefreshFailed,
    RefreshTokenReuseDetected,
    SessionEnded,
)
from application.ports import Clock, EventBus, Signer, Storage, UnitOfWork
from application.shared.backchannel import queue_logout_notices
from application.shared.settings import AuthSettings, Live
from application.shared.steps import hash_token, new_id, publish_all
from domain.errors import InvalidRefreshToken
from domain.login import still_active
from domain.model import USER_AGENT_MAX_LENGTH, RefreshToken, Session, SessionEndReason, User

REFRESH_TOKEN_BYTES = 32
"""Entropy of a refresh token: 32 bytes (256 bits) from ``secrets``, base64url (43 chars)."""


def hash_refresh_token(token: str) -> str:
    """SHA-256 of the token's UTF-8 bytes, lower-case hex (64 chars): the only stored form."""
    return hash_token(token)


AccessMinter = Callable[[User, list[str], datetime, str], Awaitable[tuple[str, str, int]]]
"""Signs the access token of a client-bound family (docs/reference/oauth-and-oidc.md): ``(user,
groups, now, family_id)`` → ``(token, alg, expires_in)``; the default mints a JSON-API token."""


def new_jti() -> str:
    """A JWT ID (RFC 7519 section 4.1.7): 12 lower-case hex characters (48 random bits)."""
    return secrets.token_hex(6)


@attrs.frozen
class TokenPair:
    """What /login and /refresh hand out (contract ``TokenPair``).

    ``expires_in`` and ``refresh_expires_in`` are lifetimes in seconds from issuance.
    ``algorithm`` is the JWS ``alg`` the access token was signed with (not sent to clients).
    """

    access_token: str
    refresh_token: str = attrs.field(repr=False)
    expires_in: int
    refresh_expires_in: int
    token_type: str = "Bearer"  # noqa: S105 - the RFC 6750 token type, not a secret
    algorithm: str = ""


@attrs.frozen
class TokenIssuer:
    """Builds access tokens and refresh tokens for a user.

    ``issue_pair`` writes the new refresh token into the caller's unit of work; the caller
    commits, then publishes the ``AccessTokenIssued`` it returns.
    """

    _signer: Signer
    _clock: Clock
    _settings: Live[AuthSettings]

    def access_claims(self, user: User, groups: list[str], now: datetime) -> dict[str, Any]:
        """The claims of docs/reference/tokens-and-sessions.md (RFC 7519, RFC 9068).

        ``sub, email, role, org_id, iss, aud, iat, exp, groups, jti`` (iat/exp in Unix seconds).
        """
        cfg = self._settings.current
        iat = int(now.timestamp())
        return {
            "sub": user.id,
            "email": user.email,
            "role": user.role.value,
            "org_id": user.org_id,
            "iss": cfg.issuer,
            "aud": cfg.audience,
            "iat": iat,
            "exp": iat + cfg.access_token_ttl,
            "groups": groups,
            "jti": new_jti(),
        }

    async def issue_pair(
        self,
        uow: UnitOfWork,
        user: User,
        grant: str,
        *,
        family_id: str | None = None,
        session_expires_at: datetime | None = None,
        user_agent: str | None = None,
        client_address: str | None = None,
        groups: list[str] | None = None,
        access: AccessMinter | None = None,
        suffix: str = "",
    ) -> tuple[TokenPair, AccessTokenIssued]:
        """Sign an access token and store a new refresh token in ``uow``.

        A login passes neither ``family_id`` nor ``session_expires_at``: a new family starts,
        stored as a ``Session`` (docs/reference/tokens-and-sessions.md) with ``user_agent`` (cut to
        256 characters) and ``client_address``, and its absolute end is now + ``session_max_age``. A
        rotation passes the family's values, so the new token's expiry is min(now +
        ``refresh_token_ttl``, ``session_expires_at``).

        ``groups``: the user's group ids when the caller read them with the user (one
        statement, ``UserRepo.get_with_groups``); None reads them here.

        ``access``: signs the access token instead (a family of an OAuth client,
        docs/reference/oauth-and-oidc.md); ``suffix``: appended to the refresh token after a ``.``
        (what the client's family carries from its authorization; covered by the stored hash like
        the rest).

        Returns the pair and the ``AccessTokenIssued`` (``grant``: ``"login"`` or ``"refresh"``)
        to publish once ``uow`` has committed. Raises what ``TokenStore.add`` raises.
        """
        cfg = self._settings.current
        now = self._clock.now()
        if family_id is None or session_expires_at is None:
            family_id = new_id()
            session_expires_at = now + timedelta(seconds=cfg.session_max_age)
            await uow.sessions.add(
                Session(
                    id=family_id,
                    user_id=user.id,
                    created_at=now,
                    last_used_at=now,
                    expires_at=session_expires_at,
                    user_agent=None if user_agent is None else user_agent[:USER_AGENT_MAX_LENGTH],
                    client_address=client_address,
                )
            )
        expires_at = min(now + timedelta(seconds=cfg.refresh_token_ttl), session_expires_at)
        clear = secrets.token_urlsafe(REFRESH_TOKEN_BYTES) + (f".{suffix}" if suffix else "")
        record = RefreshToken(
            token_hash=hash_refresh_token(clear),
            user_id=user.id,
            family_id=family_id,
            expires_at=expires_at,
            session_expires_at=session_expires_at,
            created_at=now,
        )
        await uow.tokens.add(record)
        if groups is None:
            groups = await uow.groups.groups_of(user.id)
        if access is None:
            algorithm = self._signer.signing_algorithm(cfg.algorithm_for(cfg.audience))
            token = await self._signer.sign(self.access_claims(user, groups, now), alg=algorithm)
            expires_in = cfg.access_token_ttl
        else:
            token, algorithm, expires_in = await access(user, groups, now, family_id)
        pair = TokenPair(
            access_token=token,
            refresh_token=clear,
            expires_in=expires_in,
            refresh_expires_in=max(0, int((expires_at - now).total_seconds())),
            algorithm=algorithm,
        )
        issued = AccessTokenIssued(
            user_id=user.id, family_id=family_id, algorithm=algorithm, grant=grant
        )
        return pair, issued


@attrs.frozen
class SessionRotation:
    """A session's refresh tokens: one-time rotation with reuse detection and the reuse
    interval, and the end of a session (docs/reference/tokens-and-sessions.md, RFC 9700 section
    4.14.2)."""

    _storage: Storage
    _issuer: TokenIssuer
    _bus: EventBus
    _clock: Clock
    _settings: Live[AuthSettings]

    async def rotate(
        self, token: str, *, client_id: str | None = None, access: AccessMinter | None = None
    ) -> TokenPair:
        """Exchange a refresh token for a new pair, in one atomic step.

        The token's record is taken (deleted) and the new one stored in the same transaction, so
        of N concurrent calls with one token exactly one succeeds. The new access token reads the
        user record afresh (role and groups as of now). The rotated hash is remembered until its
        expiry. Presenting it again is reuse: every live token of its family is revoked and the
        session ended — committed although this call fails — and ``RefreshTokenReuseDetected``
        and ``SessionEnded`` (reason ``reuse``) are published. Except inside the reuse interval
        (``auth.refresh_reuse_interval`` s after the rotation, at most ``auth.refresh_reuse_max``
        times per token, counted by a compare-and-set in the database): then it rotates once
        more, in the same session. After the commit it publishes ``AccessTokenIssued`` (grant
        ``refresh``) on success and ``RefreshFailed`` for an unknown, revoked or expired token.

        ``client_id``: the OAuth client presenting the token (docs/reference/oauth-and-oidc.md;
        None: the JSON API): a token of another client's family, or of the JSON API, is refused as
        unknown and changes nothing. ``access`` signs the new access token
        (``TokenIssuer.issue_pair``); the part of ``token`` after its first ``.`` is kept.

        Raises ``InvalidRefreshToken`` for an unknown, expired, reused or revoked token, or one
        whose user is gone or disabled.
        """
        token_hash = hash_refresh_token(token)
        now = self._clock.now()
        bound = _Binding(client_id, access, token.partition(".")[2])
        async with self._storage.begin() as uow:
            outcome = await self._exchange(uow, token_hash, now, bound)
        await publish_all(self._bus, outcome.events)
        if outcome.pair is None:
            raise InvalidRefreshToken(outcome.refusal)
        return outcome.pair

    async def _exchange(
        self, uow: UnitOfWork, token_hash: str, now: datetime, bound: _Binding
    ) -> RotationOutcome:
        """Take the live token of ``token_hash`` and reissue, or judge a token seen before.
        A token of another client's family is refused before anything is written (the unit
        is left without a commit: the take is undone)."""
        record = await uow.tokens.take(token_hash)
        if record is None:
            return await self._presented_again(uow, token_hash, now, bound)
        session = await uow.sessions.get(record.family_id)
        if session is not None and session.client_id != bound.client_id:
            return RotationOutcome.refused(RefreshFailed(reason="unknown", user_id=record.user_id))
        return await self._reissue(uow, record, now, bound, first_rotation=True)

    async def _presented_again(
        self, uow: UnitOfWork, token_hash: str, now: datetime, bound: _Binding
    ) -> RotationOutcome:
        """No live token: unknown, of an ended session, inside the reuse interval, or reuse."""
        rotated = await uow.tokens.find_rotated(token_hash)
        if rotated is None or rotated.is_expired(now):
            return RotationOutcome.refused(RefreshFailed(reason="unknown"))
        session = await uow.sessions.get(rotated.family_id)
        if session is None or session.client_id != bound.client_id:  # ended, or not the caller's
            return RotationOutcome.refused(RefreshFailed(reason="unknown", user_id=rotated.user_id))
        if await self._claim_reuse(uow, token_hash, now):
            return await self._reissue(uow, rotated, now, bound, first_rotation=False)
        return await self._revoke_reused(uow, rotated, token_hash, now)

    async def _claim_reuse(self, uow: UnitOfWork, token_hash: str, now: datetime) -> bool:
        """Whether one more use inside the reuse interval is allowed (and now counted)."""
        cfg = self._settings.current
        if cfg.refresh_reuse_interval <= 0:
            return False
        since = now - timedelta(seconds=cfg.refresh_reuse_interval)
        claimed = await uow.tokens.claim_reuse(token_hash, since, cfg.refresh_reuse_max)
        return claimed is not None

    async def _revoke_reused(
        self, uow: UnitOfWork, rotated: RefreshToken, token_hash: str, now: datetime
    ) -> RotationOutcome:
        """Reuse: end the session and commit, though the call fails (RFC 9700 4.14.2)."""
        await queue_logout_notices(uow, rotated.user_id, now, [rotated.family_id])
        revoked = await uow.sessions.end(rotated.family_id)
        events: list[Event] = [
            RefreshTokenReuseDetected(
                user_id=rotated.user_id,
                family_id=rotated.family_id,
                token_hash_prefix=token_hash[:8],
                revoked=revoked,
            ),
            SessionEnded(rotated.user_id, rotated.family_id, SessionEndReason.REUSE),
        ]
        await record_audit(uow, events, now)
        await uow.commit()
        return RotationOutcome(
            events=tuple(events),
            refusal="refresh token was already used; its session is revoked",
        )

    async def _reissue(
        self,
        uow: UnitOfWork,
        record: RefreshToken,
        now: datetime,
        bound: _Binding,
        *,
        first_rotation: bool,
    ) -> RotationOutcome:
        """A new pair in ``record``'s session for its user as of now, or a refusal when the
        token expired or the user is gone or disabled (the taken record stays deleted).
        ``first_rotation``: remember the rotated hash (not when rotating again in the reuse
        interval: it is remembered already)."""
        found = await uow.users.get_with_groups(record.user_id)
        user, groups = found if found is not None else (None, [])
        if record.is_expired(now) or not still_active(user):
            await uow.commit()
            return RotationOutcome.refused(RefreshFailed(reason="expired", user_id=record.user_id))
        if first_rotation:
            await uow.tokens.remember_rotated(record, now)
        pair, issued = await self._issuer.issue_pair(
            uow,
            user,
            "refresh",
            family_id=record.family_id,
            session_expires_at=record.session_expires_at,
            groups=groups,
            access=bound.access,
            suffix=bound.suffix,
        )
        await record_audit(uow, [issued], now)
        await uow.commit()
        return RotationOutcome(events=(issued,), pair=pair)

    async def revoke_session(self, token: str) -> None:
        """Logout: end the session of a live or rotated token (``SessionEnded``, reason
        ``logout``); unknown tokens and ended sessions do nothing."""
        token_hash = hash_refresh_token(token)
        async with self._storage.begin() as uow:
            record = await uow.tokens.find(token_hash) or await uow.tokens.find_rotated(token_hash)
            if record is None or await uow.sessions.get(record.family_id) is None:
                return
            now = self._clock.now()
            await queue_logout_notices(uow, record.user_id, now, [record.family_id])
            await uow.sessions.end(record.family_id)
            ended = SessionEnded(record.user_id, record.family_id, SessionEndReason.LOGOUT)
            await record_audit(uow, [ended], now)
            await uow.commit()
        await self._bus.publish(ended)


@attrs.frozen
class _Binding:
    """Who presents a refresh token: the OAuth client (None: the JSON API), how its access
    token is signed, and the suffix its refresh tokens carry."""

    client_id: str | None
    access: AccessMinter | None
    suffix: str


@attrs.frozen
class RotationOutcome:
    """What presenting a refresh token came to, decided inside the unit of work.

    Attributes:
        events: to publish, in order, once the unit of work is over (committed or not).
        pair: the new pair; None when the token was refused.
        refusal: the ``InvalidRefreshToken`` message when ``pair`` is None.
    """

    events: tuple[Event, ...]
    pair: TokenPair | None = None
    refusal: str = ""

    @classmethod
    def refused(cls, failed: RefreshFailed) -> RotationOutcome:
        """A refusal publishing ``failed``; the message says "expired" for reason ``expired``."""
        if failed.reason == "expired":
            return cls(events=(failed,), refusal="refresh token is expired")
        return cls(events=(failed,), refusal="refresh token is unknown, expired or revoked")
