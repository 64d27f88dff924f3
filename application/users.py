"""Building new user records: shared by registration and the operator's create-superadmin."""

from __future__ import annotations

from application.ports import Clock, Hasher
from domain.model import Role, User, check_password_policy


async def new_user(
    *,
    user_id: str,
    email: str,
    password: str,
    role: Role,
    org_id: str,
    min_password_length: int,
    hasher: Hasher,
    clock: Clock,
) -> User:
    """A new ``User`` (not stored) with ``password`` checked against the policy and bcrypt-hashed.

    ``email`` must already be normalized. Raises ``ValidationFailed`` naming ``password`` when the
    policy (min length, at most 72 UTF-8 bytes) is not met; hashes off the event loop.
    """
    check_password_policy(password, min_password_length)
    return User(
        id=user_id,
        email=email,
        password_hash=await hasher.hash(password),
        role=role,
        org_id=org_id,
        created_at=clock.now(),
    )
