"""The four ways to log in — a password, the TOTP second step, a passkey, another identity
provider — over memory storage and a fixed clock: each gives tokens, and each refuses alike a user
who proved itself but may not log in now (docs/reference/accounts.md: disabled; an unverified
email while ``auth.require_verified_email``): the refusal raised, one ``login.failed`` naming
the user, the client, the refusal's code and the factor, and no session started."""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import pyotp
import pytest

from application.events.catalog import LoginFailed, LoginSucceeded
from application.shared.reauth import FreshProof
from domain import errors
from domain.federation import FederatedIdentity, UpstreamIdentity
from domain.model import User
from tests.unit.application.harness import (
    ADDRESS,
    PASSWORD,
    Harness,
    build_harness,
    federation,
    provider,
)
from tests.webauthn_authenticator import SoftAuthenticator

ORIGIN = "http://localhost:8080"
"""The default ``auth.issuer``'s origin: the relying party of the passkeys."""
ISSUER = "https://idp.example"


@attrs.define
class Path_:
    """One way in: ``method`` (``login.failed``'s and ``login.succeeded``'s), ``enrol`` (give a
    stored user this factor), ``begin`` (everything before the last step: its state) and
    ``finish`` (the last step, where the proof is checked: tokens)."""

    method: str
    enrol: Callable[[Harness, User], Awaitable[Any]]
    begin: Callable[[Harness, User, Any], Awaitable[Any]]
    finish: Callable[[Harness, User, Any], Awaitable[Any]]


async def _nothing(harness: Harness, user: User, *_: Any) -> None:
    return None


async def _password(harness: Harness, user: User, _: Any) -> Any:
    return await harness.container.auth_service().login(user.email, PASSWORD, ADDRESS)


def _totp_code(harness: Harness, secret: str) -> str:
    return pyotp.TOTP(secret).at(harness.clock.now().timestamp())


async def _enrol_totp(harness: Harness, user: User) -> str:
    enrolment = harness.container.mfa_enrolment()
    started = await enrolment.start(user.id, FreshProof(PASSWORD), ADDRESS)
    await enrolment.confirm(user.id, _totp_code(harness, started.secret))
    harness.clock.advance(30)  # the confirming code's step is spent
    return str(started.secret)


async def _password_step(harness: Harness, user: User, secret: str) -> tuple[str, str]:
    with pytest.raises(errors.MfaRequired) as required:
        await _password(harness, user, None)
    return required.value.mfa_token, secret


async def _totp_step(harness: Harness, user: User, state: tuple[str, str]) -> Any:
    token, secret = state
    mfa = harness.container.mfa_login()
    return await mfa.complete(token, _totp_code(harness, secret), ADDRESS)


async def _enrol_passkey(harness: Harness, user: User) -> SoftAuthenticator:
    registration = harness.container.passkey_registration()
    started = await registration.start(user.id, FreshProof(PASSWORD), ADDRESS)
    device = SoftAuthenticator()
    answer = device.register(started.options, ORIGIN)
    await registration.finish(user.id, started.ceremony_id, answer, "laptop")
    return device


async def _passkey_options(harness: Harness, user: User, device: SoftAuthenticator) -> Any:
    started = await harness.container.passkey_login().start(email=user.email)
    return started.ceremony_id, device.assert_(started.options, ORIGIN)


async def _passkey_assertion(harness: Harness, user: User, state: tuple[str, Any]) -> Any:
    ceremony_id, answer = state
    return await harness.container.passkey_login().finish(ceremony_id, answer, ADDRESS)


async def _enrol_identity(harness: Harness, user: User) -> None:
    identity = FederatedIdentity(ISSUER, "sub-1", "idp", user.id, user.email,
                                 harness.clock.now(), email_was_verified=True)  # fmt: skip
    async with harness.storage.begin() as uow:
        await uow.identities.add(identity)
        await uow.commit()
    harness.upstream.identity = UpstreamIdentity(ISSUER, "sub-1", user.email, True)


async def _id_token(harness: Harness, user: User, _: Any) -> Any:
    login = harness.container.federated_login()
    return await login.native("idp", "id-token", secrets.token_urlsafe(), ADDRESS, "ua")


PATHS = {
    "password": Path_("password", _nothing, _nothing, _password),
    "totp": Path_("totp", _enrol_totp, _password_step, _totp_step),
    "passkey": Path_("passkey", _enrol_passkey, _passkey_options, _passkey_assertion),
    "federated": Path_("federated", _enrol_identity, _nothing, _id_token),
}


def _harness(tmp_path: Path, require_verified_email: bool = False) -> Harness:
    return build_harness(
        tmp_path,
        auth={"require_verified_email": require_verified_email},
        federation=federation(provider("idp")),
    )


async def _ready(harness: Harness, path: Path_) -> tuple[User, Any]:
    """A verified user with ``path``'s factor, past every step but the last."""
    user = await harness.add_user()
    enrolled = await path.enrol(harness, user)
    return user, await path.begin(harness, user, enrolled)


async def _live_sessions(harness: Harness, user: User) -> int:
    async with harness.storage.read() as uow:
        return len(await uow.sessions.list_live(user.id, harness.clock.now()))


@pytest.mark.parametrize("path", PATHS.values(), ids=PATHS.keys())
async def test_each_path_logs_in_with_tokens(tmp_path: Path, path: Path_) -> None:
    harness = _harness(tmp_path)
    user, state = await _ready(harness, path)
    pair = await path.finish(harness, user, state)
    assert pair.access_token and pair.refresh_token
    claims = await harness.container.auth_service().verify_token(pair.access_token)
    assert claims["sub"] == user.id
    [succeeded] = harness.recorder.of(LoginSucceeded)
    assert (succeeded.user_id, succeeded.method) == (user.id, path.method)
    assert harness.recorder.of(LoginFailed) == []


# the change made before the last step, the setting, the refusal raised.
REFUSALS = {
    "disabled": ({"disabled": True}, False, errors.AccountDisabled),
    "unverified while required": ({"email_verified": False}, True, errors.EmailNotVerified),
}


@pytest.mark.parametrize("path", PATHS.values(), ids=PATHS.keys())
@pytest.mark.parametrize(("change", "required", "refusal"), REFUSALS.values(), ids=REFUSALS.keys())
async def test_each_path_refuses_alike_a_user_who_may_not_log_in(
    tmp_path: Path,
    path: Path_,
    change: dict[str, bool],
    required: bool,
    refusal: type[errors.AccountDisabled | errors.EmailNotVerified],
) -> None:
    harness = _harness(tmp_path, require_verified_email=required)
    user, state = await _ready(harness, path)
    live = await _live_sessions(harness, user)
    await harness.update_user(user, **change)
    with pytest.raises(refusal) as refused:
        await path.finish(harness, user, state)
    assert harness.recorder.of(LoginFailed) == [
        LoginFailed(user.id, ADDRESS, refused.value.code, path.method)
    ]
    assert harness.recorder.of(LoginSucceeded) == []
    assert await _live_sessions(harness, user) == live
