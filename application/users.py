"""Building new user records: shared by registration and the operator's create-superadmin."""

from __future__ import annotations

from application.ports import Clock, Hasher
from domain.model import Role, User


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

    ``email`` must already be normalized and ``password`` already checked against the policy
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
