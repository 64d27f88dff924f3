"""Key rotation without logging anyone out (issue 16; ADR 0015), by the injected clock, over
the key files and the database store, for RS256 and both ML-DSA sets: a rotated key is in the
JWKS ``auth.key_publish_ahead`` seconds before it signs; the old key verifies until its last
token expired (``access_token_ttl + leeway`` after it stopped signing), then leaves the JWKS;
``keys retire`` withdraws a key at once; the schedule rotates when the newest key is old
enough; peers pick the rotation up by events and by polling."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from adapters.crypto.db_keystore import DatabaseKeyStore
from adapters.crypto.jwt_signer import JwtSigner
from adapters.crypto.key_records import KeyOperationRefused, SigningKeyStore
from adapters.crypto.keystore import KeyStore
from adapters.events.inprocess import InProcessEventBus
from adapters.persistence.migrate import apply_sqlite_migrations
from application.events.catalog import SigningKeysChanged
from application.shared.settings import AuthSettings
from domain.errors import InvalidToken
from entrypoints.cluster import keys_round
from tests.fakes import FakeClock

AHEAD, TTL, LEEWAY = 600, 900, 30


@pytest.fixture(params=["file", "database"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[AuthSettings], Any]:
    if request.param == "file":
        store: SigningKeyStore = KeyStore(tmp_path / "keys")
    else:
        path = str(tmp_path / "authsvc.db")
        apply_sqlite_migrations(path)
        store = DatabaseKeyStore.sqlite(path, secrets.token_bytes(32))
    return lambda settings: store


@pytest.fixture(params=["RS256", "ML-DSA-65", "ML-DSA-87"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> AuthSettings:
    return AuthSettings(
        algorithm=request.param,
        key_dir=str(tmp_path / "keys"),
        access_token_ttl=TTL,
        leeway=LEEWAY,
        key_publish_ahead=AHEAD,
    )


def claims(settings: AuthSettings, clock: FakeClock) -> dict[str, Any]:
    now = int(clock.now().timestamp())
    return {"sub": "user-1", "iss": settings.issuer, "aud": settings.audience, "iat": now,
            "exp": now + settings.access_token_ttl, "jti": secrets.token_hex(4)}  # fmt: skip


async def verify(signer: JwtSigner, settings: AuthSettings, token: str) -> dict[str, Any]:
    return await signer.verify(
        token, issuer=settings.issuer, audience=settings.audience, leeway=settings.leeway
    )


@pytest.fixture
def two(
    settings: AuthSettings, stores: Callable[[AuthSettings], Any]
) -> tuple[FakeClock, JwtSigner, JwtSigner]:
    """Two instances' signers over one store, by one fake clock."""
    clock = FakeClock()
    return clock, JwtSigner(settings, clock, stores), JwtSigner(settings, clock, stores)


@pytest.fixture
def one(
    settings: AuthSettings, stores: Callable[[AuthSettings], Any]
) -> tuple[FakeClock, JwtSigner]:
    """A signer over the store, by a fake clock."""
    clock = FakeClock()
    return clock, JwtSigner(settings, clock, stores)


def kids(signer: JwtSigner) -> list[str]:
    return [k["kid"] for k in signer.jwks()["keys"]]


async def test_rotation_publishes_ahead_then_retires_after_the_last_token(
    one: tuple[FakeClock, JwtSigner], settings: AuthSettings
) -> None:
    clock, signer = one
    old = signer.kid
    record = await signer.rotate_keys()
    new = record.kid
    assert record.alg == settings.algorithm
    assert (record.activates_at - clock.now()).total_seconds() == AHEAD

    # Published at once, not yet signing.
    assert kids(signer) == [old, new]
    clock.advance(AHEAD - 1)
    assert signer.kid == old
    last_old_token = await signer.sign(claims(settings, clock))

    # At publish_ahead it signs; the old key still verifies its tokens.
    clock.advance(1)
    assert signer.kid == new and kids(signer) == [new, old]
    new_token = await signer.sign(claims(settings, clock))
    assert (await verify(signer, settings, new_token))["sub"] == "user-1"
    assert (await verify(signer, settings, last_old_token))["sub"] == "user-1"

    # Until ttl + leeway after it stopped signing: then out of the JWKS and refused.
    clock.advance(TTL + LEEWAY - 1)
    assert old in kids(signer)
    clock.advance(1)
    assert kids(signer) == [new]
    with pytest.raises(InvalidToken):
        await verify(signer, settings, last_old_token)


async def test_rotate_now_signs_at_once_and_the_old_key_keeps_verifying(
    one: tuple[FakeClock, JwtSigner], settings: AuthSettings
) -> None:
    clock, signer = one
    old = signer.kid
    token = await signer.sign(claims(settings, clock))
    record = await signer.rotate_keys(now=True)
    assert signer.kid == record.kid != old
    assert (await verify(signer, settings, token))["sub"] == "user-1"

    # ``keys retire`` withdraws the old key at once (a key that leaked).
    await signer.retire_key(old)
    assert kids(signer) == [record.kid]
    with pytest.raises(InvalidToken):
        await verify(signer, settings, token)


async def test_retire_refuses_the_signing_key_pending_keys_and_unknown_kids(
    one: tuple[FakeClock, JwtSigner], settings: AuthSettings
) -> None:
    signer = one[1]
    with pytest.raises(KeyOperationRefused, match="signs new tokens"):
        await signer.retire_key(signer.kid)
    pending = await signer.rotate_keys()
    with pytest.raises(KeyOperationRefused, match="pending"):
        await signer.retire_key(pending.kid)
    with pytest.raises(KeyOperationRefused, match="no signing key"):
        await signer.retire_key("nope")
    assert len(kids(signer)) == 2


async def test_a_peer_learns_of_a_rotation_by_event_or_poll(
    two: tuple[FakeClock, JwtSigner, JwtSigner], settings: AuthSettings
) -> None:
    clock, a, b = two
    record = await a.rotate_keys()
    assert record.kid not in kids(b)
    assert await b.refresh_keys()  # what the event (or the next poll) does
    assert kids(a) == kids(b)
    clock.advance(AHEAD)
    assert a.kid == b.kid == record.kid


async def test_a_token_of_an_unknown_key_makes_a_peer_re_read_the_store(
    two: tuple[FakeClock, JwtSigner, JwtSigner], settings: AuthSettings
) -> None:
    clock, a, b = two
    await a.rotate_keys(now=True)
    token = await a.sign(claims(settings, clock))
    assert (await verify(b, settings, token))["sub"] == "user-1"


async def test_the_schedule_rotates_when_the_newest_key_is_old_enough(
    stores: Callable[[AuthSettings], Any], settings: AuthSettings
) -> None:
    clock = FakeClock()
    interval = 7200
    scheduled = AuthSettings(**{**_fields(settings), "key_rotation_interval": interval})
    a = JwtSigner(scheduled, clock, stores)
    b = JwtSigner(scheduled, clock, stores)
    bus = InProcessEventBus()
    announced: list[SigningKeysChanged] = []
    bus.subscribe(SigningKeysChanged, announced.append)

    await keys_round(a, scheduled, bus)
    await keys_round(b, scheduled, bus)
    assert announced == [] and len(kids(a)) == 1
    clock.advance(interval)
    await keys_round(a, scheduled, bus)
    await keys_round(b, scheduled, bus)  # b finds a's key: not due again
    assert len(announced) == 1 and announced[0].reason == "rotated"
    assert kids(a) == kids(b) and len(kids(a)) == 2
    clock.advance(AHEAD)
    assert a.kid == b.kid == announced[0].kids[0]


async def test_switching_algorithm_and_back_with_a_rotated_key(
    one: tuple[FakeClock, JwtSigner], settings: AuthSettings
) -> None:
    """A switch away keeps every key of the old algorithm verifying ttl + leeway; switching
    back signs with the key that signed last (the rotated one), not the retired one."""
    signer = one[1]
    rotated = await signer.rotate_keys(now=True)
    other = "ML-DSA-65" if settings.algorithm != "ML-DSA-65" else "RS256"
    signer.apply(AuthSettings(**{**_fields(settings), "algorithm": other}))
    assert signer.algorithm == other
    assert rotated.kid in kids(signer)
    signer.apply(settings)
    assert signer.kid == rotated.kid


def _fields(settings: AuthSettings) -> dict[str, Any]:
    import attrs

    return attrs.asdict(settings)
