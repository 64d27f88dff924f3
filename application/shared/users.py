"""User records: new users, and finding the user a request names (docs/reference/accounts.md):
``load_user`` (by id or ``ByEmail``), ``active_user`` / ``token_user`` (the user of a bearer
token, refused when gone or disabled) and ``user_in_scope`` (``NotFound`` outside the actor's
organization, ``domain.policy.require_in_scope``). Every capability that acts on a user finds
it here; the use cases on users are ``application.accounts.users``.
"""

from __future__ import annotations

from typing import TypeAlias

import attrs

from application.ports import Clock, Hasher, UnitOfWork
from domain import policy
from domain.errors import InvalidToken, NotFound
from domain.login import still_active
from domain.model import Role, User
from domain.policy import Actor

__all__ = [
    "USER_GONE",
    "ByEmail",
    "UserRef",
    "active_user",
    "load_user",
    "new_user",
    "token_user",
    "user_in_scope",
]


@attrs.frozen
class ByEmail:
    """Names a user by its email, already normalized (the command line names users so)."""

    email: str


UserRef: TypeAlias = str | ByEmail
"""A user named by its id, or ``ByEmail``."""


async def new_user(
    *,
    user_id: str,
    email: str,
    password: str,
    role: Role,
    org_id: str,
    hasher: Hasher,
    clock: Clock,
) -> User:
    """A new ``User`` (not stored) whose ``password`` is bcrypt-hashed (off the event loop).

    Shared by registration and the operator's create-superadmin. ``email`` must already be
    normalized and ``password`` already checked against the policy
    (``domain.model.check_password_policy``): callers check it first, before any lookup.
    """
    return User(
        id=user_id,
        email=email,
        password_hash=await hasher.hash(password),
        role=role,
        org_id=org_id,
        created_at=clock.now(),
    )


async def load_user(uow: UnitOfWork, user: UserRef) -> User:
    """The user named by ``user`` (an id or ``ByEmail``). Raises ``NotFound`` when missing."""
    if isinstance(user, ByEmail):
        found = await uow.users.get_by_email(user.email)
    else:
        found = await uow.users.get(user)
    if found is None:
        raise NotFound("user not found")
    return found


USER_GONE = "the token's user no longer exists or is disabled"


def active_user(user: User | None) -> User:
    """``user`` if it exists and is not disabled; else ``InvalidToken`` (docs/reference/accounts.md:
    a disabled user's bearer tokens get 401 ``invalid_token``)."""
    if not still_active(user):
        raise InvalidToken(USER_GONE)
    return user


async def token_user(uow: UnitOfWork, user_id: str) -> User:
    """The user a verified bearer token names. Raises ``InvalidToken`` if it is gone or
    disabled."""
    return active_user(await uow.users.get(user_id))


async def user_in_scope(uow: UnitOfWork, actor: Actor, user: UserRef) -> User:
    """The user named by ``user``; ``NotFound`` when missing or outside ``actor``'s scope."""
    found = await load_user(uow, user)
    policy.require_in_scope(actor, found.org_id, "user")
    return found
