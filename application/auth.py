"""Authentication use cases: register, login, authenticate (bearer), profile, refresh, logout,
change password (seed.md parts 3–5; contract section 2)."""

from __future__ import annotations

import uuid
from typing import Any

import attrs

from application.events import (
    AccessTokenIssued,
    LoginFailed,
    LoginSucceeded,
    PasswordChanged,
    UserRegistered,
)
from application.ports import Clock, EmailNormalizer, EventBus, Hasher, Signer, UnitOfWork
from application.settings import AuthSettings, Live
from application.throttle import LoginThrottle
from application.tokens import RefreshTokens, TokenIssuer, TokenPair
from application.users import new_user
from domain.errors import (
    EmailTaken,
    InvalidCredentials,
    InvalidOldPassword,
    InvalidToken,
    RateLimited,
    ValidationFailed,
)
from domain.model import BCRYPT_MAX_PASSWORD_BYTES, Role, User, check_password_policy


@attrs.frozen
class Profile:
    """A user with the ids of its groups (the /me answer)."""

    user: User
    groups: list[str]


@attrs.frozen
class Authenticated:
    """The caller behind a verified bearer token: its current user record and the token's claims."""

    user: User
    claims: dict[str, Any]


class AuthService:
    """The authentication use cases, their ports injected (one instance per process)."""

    def __init__(
        self,
        uow: UnitOfWork,
        hasher: Hasher,
        signer: Signer,
        bus: EventBus,
        clock: Clock,
        settings: Live[AuthSettings],
        normalize_email: EmailNormalizer,
        throttle: LoginThrottle,
    ) -> None:
        self._uow = uow
        self._hasher = hasher
        self._signer = signer
        self._bus = bus
        self._clock = clock
        self._settings = settings
        self._normalize_email = normalize_email
        self._throttle = throttle
        self._issuer = TokenIssuer(signer, clock, settings)
        self._refresh = RefreshTokens(uow, self._issuer, bus, clock)

    async def register(self, email: str, password: str) -> User:
        """Create a user with role ``viewer`` in ``auth.default_org_id``.

        The email is syntax-checked and stored lower-case; the password must satisfy the policy
        (min length, at most 72 UTF-8 bytes) and is stored only as a bcrypt hash.
        Raises ``ValidationFailed`` (422) or ``EmailTaken`` (409); on either nothing is written.
        """
        cfg = self._settings.current
        canonical = self._normalize_email(email)
        check_password_policy(password, cfg.password_min_length)
        async with self._uow.begin() as tx:
            if await tx.users.get_by_email(canonical) is not None:
                raise EmailTaken("a user with this email already exists")
        user = await new_user(
            user_id=uuid.uuid4().hex,
            email=canonical,
            password=password,
            role=Role.VIEWER,
            org_id=cfg.default_org_id,
            hasher=self._hasher,
            clock=self._clock,
        )
        async with self._uow.begin() as tx:
            await tx.users.add(user)  # raises EmailTaken on a concurrent duplicate
            await tx.commit()
        await self._bus.publish(UserRegistered(user_id=user.id, org_id=user.org_id))
        return user

    def _login_email(self, email: str) -> str:
        try:
            return self._normalize_email(email)
        except ValidationFailed:
            return email.strip().lower()  # cannot exist; still costs a dummy check below

    async def login(self, email: str, password: str, client: str) -> TokenPair:
        """Verify credentials and start a session (a new refresh-token family).

        An unknown email spends one bcrypt check against a dummy hash, so the answer and its
        timing are the same as for a wrong password. Raises ``RateLimited`` (429) when this email
        from this ``client`` address is throttled, else ``InvalidCredentials`` (401).

        Events, after the commit: ``LoginSucceeded`` and ``AccessTokenIssued`` (grant ``login``)
        on success; ``LoginFailed`` with reason ``wrong_password``, ``unknown_email`` or
        ``rate_limited`` on failure.
        """
        canonical = self._login_email(email)
        try:
            await self._throttle.check(canonical, client)
        except RateLimited:
            await self._bus.publish(LoginFailed(user_id=None, client=client, reason="rate_limited"))
            raise
        async with self._uow.begin() as tx:
            user = await tx.users.get_by_email(canonical)
        if len(password.encode("utf-8")) > BCRYPT_MAX_PASSWORD_BYTES:
            await self._hasher.verify("", None)  # no stored password can match; same cost
            ok = False
        else:
            ok = await self._hasher.verify(password, user.password_hash if user else None)
        if not ok or user is None:
            await self._throttle.failed(canonical, client)
            await self._bus.publish(
                LoginFailed(
                    user_id=user.id if user else None,
                    client=client,
                    reason="wrong_password" if user else "unknown_email",
                )
            )
            raise InvalidCredentials("email or password is wrong")
        await self._throttle.succeeded(canonical, client)
        async with self._uow.begin() as tx:
            current = await tx.users.get(user.id)
            if current is None:  # deleted between the check and now
                raise InvalidCredentials("email or password is wrong")
            pair, record = await self._issuer.issue_pair(tx, current)
            await tx.commit()
        await self._bus.publish(LoginSucceeded(user_id=user.id, family_id=record.family_id))
        await self._bus.publish(
            AccessTokenIssued(
                user_id=user.id,
                family_id=record.family_id,
                algorithm=pair.algorithm,
                grant="login",
            )
        )
        return pair

    async def _verified_subject(self, token: str) -> tuple[str, dict[str, Any]]:
        cfg = self._settings.current
        claims = await self._signer.verify(
            token, issuer=cfg.issuer, audience=cfg.audience, leeway=cfg.leeway
        )
        sub = claims.get("sub")
        if not isinstance(sub, str):
            raise InvalidToken("token has no subject")
        return sub, claims

    async def verify_token(self, token: str) -> dict[str, Any]:
        """The claims of a valid bearer access token, without loading its user (no storage
        access; the role claim may be up to ``auth.access_token_ttl`` seconds old).

        For decisions that must still work while the storage is down (e.g. showing health
        details); everything else uses ``authenticate``. Raises ``InvalidToken``.
        """
        _, claims = await self._verified_subject(token)
        return claims

    async def authenticate(self, token: str) -> Authenticated:
        """Verify a bearer access token (RFC 6750) and load its user afresh.

        Raises ``InvalidToken`` for a bad token (see ``Signer.verify``) or a user that is gone.
        """
        sub, claims = await self._verified_subject(token)
        async with self._uow.begin() as tx:
            user = await tx.users.get(sub)
        if user is None:
            raise InvalidToken("the token's user no longer exists")
        return Authenticated(user=user, claims=claims)

    async def profile(self, token: str) -> Profile:
        """The /me answer for a bearer access token: the user afresh with its group ids, read in
        one transaction. Raises ``InvalidToken`` like ``authenticate``."""
        sub, _ = await self._verified_subject(token)
        async with self._uow.begin() as tx:
            user = await tx.users.get(sub)
            groups = await tx.groups.groups_of(sub) if user is not None else []
        if user is None:
            raise InvalidToken("the token's user no longer exists")
        return Profile(user=user, groups=groups)

    async def refresh(self, refresh_token: str) -> TokenPair:
        """One-time rotation; see ``RefreshTokens.rotate``. Raises ``InvalidRefreshToken``."""
        return await self._refresh.rotate(refresh_token)

    async def logout(self, refresh_token: str) -> None:
        """Revoke the session (family) of a refresh token; an unknown token is no error."""
        await self._refresh.revoke_session(refresh_token)

    async def change_password(self, user_id: str, old_password: str, new_password: str) -> None:
        """Verify the old password, then store the new bcrypt hash and delete every refresh
        token of the user — the last two in one transaction.

        Raises ``ValidationFailed`` (new password breaks the policy; checked first, nothing
        changes), ``InvalidOldPassword`` (403), ``InvalidToken`` if the user is gone.
        """
        check_password_policy(
            new_password, self._settings.current.password_min_length, "new_password"
        )
        async with self._uow.begin() as tx:
            user = await tx.users.get(user_id)
        if user is None:
            raise InvalidToken("the token's user no longer exists")
        too_long = len(old_password.encode("utf-8")) > BCRYPT_MAX_PASSWORD_BYTES
        if too_long or not await self._hasher.verify(old_password, user.password_hash):
            raise InvalidOldPassword("the old password is wrong")
        new_hash = await self._hasher.hash(new_password)
        async with self._uow.begin() as tx:
            current = await tx.users.get(user_id)
            if current is None:
                raise InvalidToken("the token's user no longer exists")
            await tx.users.update(attrs.evolve(current, password_hash=new_hash))
            revoked = await tx.tokens.revoke_user(user_id)
            await tx.commit()
        await self._bus.publish(PasswordChanged(user_id=user_id, revoked=revoked))
