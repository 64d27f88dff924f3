"""How every login ends, once the user has proved itself (docs/reference/accounts.md,
docs/reference/mfa-and-passkeys.md, docs/reference/federation.md): the password login, the MFA
step, the passkey login and the federated login decide and end alike.

``finish_login`` decides inside the login's unit of work and returns a ``LoginOutcome``: its
events, and exactly one of a result (what ``start`` opened, committed with its audit rows), an
``mfa_token`` (a second step opened, ``open_challenge``) or a refusal
(``domain.login.login_refusal``: nothing is committed) — none when the proof did not hold
after all (``LoginOutcome.held``), and the path answers its own failure.
``LoginOutcome.conclude`` is the one linear tail after the unit of work: refuse (one
``login.failed`` row, the refusal's code as its reason, the factor as its method; 403
``account_disabled`` / ``email_not_verified``), or publish the events, then challenge (401
``mfa_required``) or return the result.

``token_start`` is the start of every login of the JSON API (a token pair). ``account_of``
names the account of an email tried in a failed or throttled login's audit row; the login paths
call it only once their answer is decided.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from typing import Generic, NoReturn, TypeVar

import attrs

from application.events.audit import publish_failure, record
from application.events.catalog import Event, LoginFailed, LoginSucceeded, MfaChallenged
from application.ports import EventBus, Storage, UnitOfWork
from application.sessions.tokens import TokenIssuer, TokenPair
from application.shared.settings import AuthSettings
from application.shared.steps import new_opaque_token, publish_all
from domain.errors import MfaRequired
from domain.login import LoginRefusal, login_refusal
from domain.model import MfaChallenge, User

__all__ = [
    "LoginOutcome",
    "LoginStart",
    "account_of",
    "finish_login",
    "open_challenge",
    "refuse_login",
    "token_start",
]

T = TypeVar("T")

LoginStart = Callable[[UnitOfWork, User, str], Awaitable[tuple[T, list[Event]]]]
"""Starts what a successful login opens, in the login's unit of work: ``(uow, user, method)``
(``method``: ``password``, ``totp``, ``recovery_code``, ``passkey``, ... or ``federated_<m>``
after another provider's login) → ``(result, events)``; the events (a ``LoginSucceeded``
first) are recorded with the commit and published after it."""

LastCheck = Callable[[User], Awaitable[bool]]
"""A path's own last write before the start, once the user may log in (the passkey's counter
compare-and-set): False when it lost, and the login does not hold."""


@attrs.frozen
class LoginOutcome(Generic[T]):
    """What a login came to, decided inside its unit of work (the ``RotationOutcome`` pattern).

    Attributes:
        user_id: the user who proved itself (None when the login did not hold).
        method: the factor named by a refusal's ``login.failed`` row.
        now: when it was decided (the refusal's audit time).
        events: to publish, in order, after the commit.
        started: ``(result,)`` of ``start``; None for a challenge, a refusal or no hold.
        mfa_token: the clear token of the second step opened, or None.
        refusal: why the user may not log in now, or None.
    """

    user_id: str | None
    method: str
    now: datetime
    events: tuple[Event, ...] = ()
    started: tuple[T] | None = None
    mfa_token: str | None = None
    refusal: LoginRefusal | None = None

    @property
    def held(self) -> bool:
        """False when the proof did not hold after all (the user gone, a race lost): nothing
        was decided, and the path answers with its own failure."""
        return self.started is not None or self.mfa_token is not None or self.refusal is not None

    async def conclude(self, storage: Storage, bus: EventBus, client: str) -> T:
        """The tail after the unit of work, for a login that held: refuse (``refuse_login``),
        or publish the events, then raise ``MfaRequired`` (publishing ``MfaChallenged``) or
        return the result. ``client``: the client address."""
        if self.refusal is not None:
            assert self.user_id is not None  # a refusal is a user's
            await refuse_login(storage, bus, self.now, self.user_id, client, self.refusal,
                               self.method)  # fmt: skip
        await publish_all(bus, self.events)
        if self.mfa_token is not None:
            assert self.user_id is not None  # a challenge is a user's
            await bus.publish(MfaChallenged(user_id=self.user_id, client=client))
            raise MfaRequired(self.mfa_token)
        if self.started is None:
            raise RuntimeError("conclude() of a login that did not hold")
        return self.started[0]


async def finish_login(
    uow: UnitOfWork,
    user: User | None,
    start: LoginStart[T],
    method: str,
    settings: AuthSettings,
    now: datetime,
    *,
    audited: str | None = None,
    second_step: str | None = None,
    last_check: LastCheck | None = None,
    also: Sequence[Event] = (),
) -> LoginOutcome[T]:
    """Decide, in ``uow``, how the login of ``user`` (read afresh in ``uow``; None: gone or
    refused by the path: the login does not hold) ends, and commit what it opened.

    - ``login_refusal`` refuses: nothing is committed; the outcome carries the refusal.
    - ``second_step`` (the first factor, ``password`` or ``federated``; None for a login that
      is a second step or a passkey already) and MFA on: a challenge is opened
      (``open_challenge``) and committed with the audit rows of ``also``.
    - Else ``last_check`` (when given) must pass, then ``start(uow, user, method)`` runs and its
      events, then ``also``, are recorded and committed.

    ``audited``: the method a refusal's row names (default ``method``).
    """
    if user is None:
        return LoginOutcome(None, audited or method, now)
    outcome: LoginOutcome[T] = LoginOutcome(user.id, audited or method, now)
    refusal = login_refusal(user, settings.require_verified_email)
    if refusal is not None:
        return attrs.evolve(outcome, refusal=refusal)
    if second_step is not None and user.mfa_enabled:
        mfa_token = await open_challenge(uow, user, now, settings, second_step)
        await record(uow, also, now)
        await uow.commit()
        return attrs.evolve(outcome, events=tuple(also), mfa_token=mfa_token)
    if last_check is not None and not await last_check(user):
        return LoginOutcome(None, audited or method, now)
    started, opened = await start(uow, user, method)
    events = (*opened, *also)
    await record(uow, events, now)
    await uow.commit()
    return attrs.evolve(outcome, events=events, started=(started,))


def token_start(
    issuer: TokenIssuer,
    client: str,
    user_agent: str | None,
    audited: Callable[[str], str] = lambda method: method,
) -> LoginStart[TokenPair]:
    """The start of a session of the JSON API (docs/reference/tokens-and-sessions.md): a new
    refresh-token family recording ``user_agent`` and ``client`` (the client address), whose
    ``TokenPair`` is the result; its events are ``LoginSucceeded`` (method ``audited(method)``)
    and ``AccessTokenIssued`` (grant ``login``)."""

    async def start(uow: UnitOfWork, user: User, method: str) -> tuple[TokenPair, list[Event]]:
        pair, issued = await issuer.issue_pair(
            uow, user, "login", user_agent=user_agent, client_address=client
        )
        return pair, [LoginSucceeded(user.id, issued.family_id, audited(method)), issued]

    return start


async def open_challenge(
    uow: UnitOfWork, user: User, now: datetime, settings: AuthSettings,
    first_factor: str = "password",
) -> str:  # fmt: skip
    """Store a new second step for ``user`` in ``uow`` after ``first_factor`` (``password`` or
    ``federated``; docs/reference/mfa-and-passkeys.md); returns the clear ``mfa_token`` (43
    characters, 256 bits), which is never stored, valid ``auth.mfa_token_ttl`` seconds."""
    clear, token_hash = new_opaque_token()
    expires_at = now + timedelta(seconds=settings.mfa_token_ttl)
    await uow.mfa.add_challenge(
        MfaChallenge(token_hash, user.id, expires_at, now, first_factor=first_factor)
    )
    return clear


async def refuse_login(
    storage: Storage,
    bus: EventBus,
    now: datetime,
    user_id: str,
    client: str,
    refusal: LoginRefusal,
    method: str,
) -> NoReturn:
    """Record and publish ``LoginFailed(user_id, client, refusal.code, method)`` (``method``:
    ``password``, ``totp``, ``recovery_code``, ``passkey`` or ``federated``), then raise
    ``refusal``. Call it after the login's transaction ended without a commit: nothing else
    was changed."""
    await publish_failure(storage, bus, now, LoginFailed(user_id, client, refusal.code, method))
    raise refusal


async def account_of(storage: Storage, canonical_email: str) -> str | None:
    """The id of the user with ``canonical_email`` (already normalized; "" for one that fails
    the syntax check), or None: one indexed read, the same for a known and an unknown email."""
    async with storage.read() as uow:
        user = await uow.users.get_by_email(canonical_email)
    return None if user is None else user.id
