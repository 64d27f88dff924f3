"""``BcryptHasher``: the ``Hasher`` port over bcrypt (cost from settings; tests use cost 4)."""

from __future__ import annotations

import asyncio

import attrs
import bcrypt
import pytest

from adapters.crypto.bcrypt_hasher import BcryptHasher
from application.shared.settings import AuthSettings, Live


@pytest.fixture
def live() -> Live[AuthSettings]:
    return Live(AuthSettings(bcrypt_rounds=4))


@pytest.fixture
def hasher(live: Live[AuthSettings]) -> BcryptHasher:
    return BcryptHasher(live)


async def test_hash_then_verify(hasher: BcryptHasher) -> None:
    h = await hasher.hash("correct horse battery")
    assert h.startswith("$2b$04$") and len(h) == 60
    assert await hasher.verify("correct horse battery", h)
    assert not await hasher.verify("correct horse batterY", h)


async def test_hashes_are_salted(hasher: BcryptHasher) -> None:
    assert await hasher.hash("same password") != await hasher.hash("same password")


async def test_non_ascii_password(hasher: BcryptHasher) -> None:
    h = await hasher.hash("pässwörd-日本")
    assert await hasher.verify("pässwörd-日本", h)
    assert bcrypt.checkpw("pässwörd-日本".encode(), h.encode())


async def test_cost_follows_live_settings(hasher: BcryptHasher, live: Live[AuthSettings]) -> None:
    old = await hasher.hash("pw-123456")
    live.replace(attrs.evolve(live.current, bcrypt_rounds=5))
    new = await hasher.hash("pw-123456")
    assert new.startswith("$2b$05$")
    assert await hasher.verify("pw-123456", old)  # old hashes keep verifying


async def test_verify_without_hash_returns_false(
    hasher: BcryptHasher, live: Live[AuthSettings]
) -> None:
    assert await hasher.verify("anything", None) is False
    assert await hasher.verify("", None) is False
    live.replace(attrs.evolve(live.current, bcrypt_rounds=5))
    assert await hasher.verify("anything", None) is False


async def test_malformed_hash_is_false_not_an_error(hasher: BcryptHasher) -> None:
    assert await hasher.verify("pw", "not-a-bcrypt-hash") is False
    assert await hasher.verify("pw", "") is False


async def test_empty_or_malformed_hash_spends_a_dummy_check(
    hasher: BcryptHasher, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user without a password (federation) costs a check at the configured cost, like an
    unknown email: the checked hash is the dummy one, never the empty one."""
    checked: list[bytes] = []
    real = bcrypt.checkpw

    def spy(password: bytes, hashed: bytes) -> bool:
        checked.append(hashed)
        return real(password, hashed)

    monkeypatch.setattr(bcrypt, "checkpw", spy)
    for stored in ("", "not-a-bcrypt-hash", None):
        assert await hasher.verify("pw", stored) is False
    assert len(checked) == 3 and all(h.startswith(b"$2b$04$") for h in checked)


async def test_password_over_72_bytes(hasher: BcryptHasher) -> None:
    h = await hasher.hash("x" * 72)
    assert not await hasher.verify("x" * 73, h)  # never silently truncated to a match
    with pytest.raises(ValueError):
        await hasher.hash("x" * 73)


async def test_work_runs_off_the_event_loop(live: Live[AuthSettings]) -> None:
    """While a costly hash runs, the loop keeps ticking (cost 10 just for this check)."""
    live.replace(attrs.evolve(live.current, bcrypt_rounds=10))
    hasher = BcryptHasher(live)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    task = asyncio.create_task(ticker())
    await hasher.verify("pw", None)
    task.cancel()
    assert ticks >= 3
