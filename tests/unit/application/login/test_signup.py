"""The sign-up use case (``application.login.signup``; docs/guides/self-service.md, ADR 0042)
over memory storage and a fixed clock: closed sign-up writes nothing; open sign-up signs in at
once; with ``auth.require_verified_email`` the sign-up proof — and only a valid one of the very
user whose link is spent, before it expires — turns the verification link into a sign-in."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from application.events.catalog import LoginSucceeded, UserRegistered
from application.login.signup import SignedUp
from application.sessions.hosted import hosted_session_hash
from application.shared.steps import new_opaque_token
from domain import errors
from domain.model import EmailToken, EmailTokenPurpose
from tests.unit.application.harness import ADDRESS, PASSWORD, Harness, build_harness

EMAIL = "new@example.com"
DAY = 86_400


async def _sign_up(harness: Harness, email: str = EMAIL) -> SignedUp:
    return await harness.container.sign_up().sign_up(email, PASSWORD, ADDRESS, "ua", None)


async def _link(harness: Harness, user_id: str) -> str:
    """A verification link's token for ``user_id`` (as the mail carries it)."""
    clear, digest = new_opaque_token()
    now = harness.clock.now()
    async with harness.storage.begin() as uow:
        await uow.email_tokens.add(EmailToken(digest, user_id, EmailTokenPurpose.VERIFY,
                                              now + timedelta(seconds=DAY), now))  # fmt: skip
        await uow.commit()
    return clear


async def _live(harness: Harness, cookie: str) -> bool:
    async with harness.storage.read() as uow:
        found = await uow.hosted_sessions.find(hosted_session_hash(cookie), harness.clock.now())
    return found is not None


async def _verified(harness: Harness, email: str = EMAIL) -> bool:
    async with harness.storage.read() as uow:
        user = await uow.users.get_by_email(email)
    assert user is not None
    return user.email_verified


async def test_closed_sign_up_writes_nothing(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, auth={"allow_registration": False})
    with pytest.raises(errors.RegistrationClosed):
        await _sign_up(harness)
    with pytest.raises(errors.RegistrationClosed):
        await harness.container.auth_service().register(EMAIL, PASSWORD)
    async with harness.storage.read() as uow:
        assert await uow.users.get_by_email(EMAIL) is None
    assert harness.recorder.events == []


async def test_open_sign_up_signs_in_at_once(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    done = await _sign_up(harness)
    assert done.proof is None and done.session is not None
    assert await _live(harness, done.session)
    assert [type(e) for e in harness.recorder.events][:2] == [UserRegistered, LoginSucceeded]
    (login,) = harness.recorder.of(LoginSucceeded)
    assert (login.user_id, login.method) == (done.user.id, "password")


async def test_a_policy_refusal_creates_nothing(tmp_path: Path) -> None:
    harness = build_harness(tmp_path)
    with pytest.raises(errors.ValidationFailed):
        await harness.container.sign_up().sign_up(EMAIL, "short", ADDRESS, "ua", None)
    await harness.add_user(EMAIL)
    with pytest.raises(errors.EmailTaken):
        await _sign_up(harness, EMAIL.upper())
    assert harness.recorder.of(LoginSucceeded) == []


async def test_the_link_with_the_proof_signs_in(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, auth={"require_verified_email": True})
    done = await _sign_up(harness)
    assert done.session is None and done.proof is not None
    assert harness.recorder.of(LoginSucceeded) == []
    with pytest.raises(errors.EmailNotVerified):  # no sign-in before the link
        await harness.container.hosted_login().password(EMAIL, PASSWORD, ADDRESS, "ua", None)
    token = await _link(harness, done.user.id)
    cookie = await harness.container.sign_up().verify(token, done.proof, ADDRESS, "ua", None)
    assert cookie is not None and await _live(harness, cookie)
    assert await _verified(harness)
    with pytest.raises(errors.InvalidVerificationToken):  # the link works once
        await harness.container.sign_up().verify(token, done.proof, ADDRESS, "ua", None)


def _tampered(proof: str) -> list[str]:
    user_id, expires, mac = proof.split(".")
    flipped = ("A" if mac[0] != "A" else "B") + mac[1:]
    return [
        f"{user_id}.{expires}.{flipped}",  # another MAC
        f"{user_id}.{int(expires) + 3600}.{mac}",  # a later expiry under the old MAC
        f"{user_id}.{expires}",
        "",
        "x" * 500,
        proof + ".",
    ]


@pytest.mark.parametrize("case", range(6))
async def test_a_tampered_proof_only_confirms(tmp_path: Path, case: int) -> None:
    harness = build_harness(tmp_path, auth={"require_verified_email": True})
    done = await _sign_up(harness)
    assert done.proof is not None
    token = await _link(harness, done.user.id)
    proof = _tampered(done.proof)[case]
    assert await harness.container.sign_up().verify(token, proof, ADDRESS, "ua", None) is None
    assert await _verified(harness)
    assert harness.recorder.of(LoginSucceeded) == []


async def test_another_users_proof_or_an_expired_one_only_confirms(tmp_path: Path) -> None:
    harness = build_harness(tmp_path, auth={"require_verified_email": True})
    mine = await _sign_up(harness)
    other = await _sign_up(harness, "other@example.com")
    sign_up = harness.container.sign_up()
    token = await _link(harness, mine.user.id)
    assert await sign_up.verify(token, other.proof, ADDRESS, "ua", None) is None
    assert await _verified(harness)
    harness.clock.advance(DAY)  # the proof lives as long as a link: expired now
    token = await _link(harness, other.user.id)
    assert await sign_up.verify(token, other.proof, ADDRESS, "ua", None) is None
    assert await _verified(harness, "other@example.com")
    assert harness.recorder.of(LoginSucceeded) == []
