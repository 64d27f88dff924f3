"""Contract of the OpenID Connect provider's ports (docs/reference/oauth-and-oidc.md) over every
storage adapter: authorization codes (single use, atomic under concurrency, reuse visible, the
family recorded, purged), consents (upsert as a union, listed newest first, revoked), hosted
sessions (live until idle or absolute expiry or the end of their ``sessions`` row by any path), and
``SessionStore.end_for_client``; the client fields of the code flow and ``Session.client_id`` round
trip."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import attrs
import pytest

from application.ports import Storage
from application.ports.oidc import TakenCode
from domain.clients import Client
from domain.errors import Conflict, NotFound
from domain.model import Session
from domain.oidc import AuthorizationCode, Consent, HostedSession
from tests.factories import T0, Make, StorageFactory

CONCURRENT_TAKES = 8
CLIENT = "c" * 32
OTHER = "d" * 32


def _client(client_id: str = CLIENT, **changes: object) -> Client:
    client = Client(
        id=client_id,
        name=f"app {client_id[:4]}",
        org_id="org-a",
        scopes=("read",),
        audience=("https://api.example.com",),
        require_dpop=False,
        disabled=False,
        created_at=T0,
        secret_hash="",
        grant_types=("authorization_code", "refresh_token"),
        redirect_uris=("https://app.example/cb", "http://127.0.0.1/cb"),
        post_logout_redirect_uris=("https://app.example/bye",),
        public=True,
        token_endpoint_auth_method="none",
        skip_consent=True,
        logo_uri="https://app.example/logo.png",
        policy_uri="https://app.example/policy",
        tos_uri="https://app.example/tos",
        id_token_signed_response_alg="ES256",
    )
    return attrs.evolve(client, **changes)  # type: ignore[arg-type]


def _code(user_id: str, code_hash: str = "a" * 64, **changes: object) -> AuthorizationCode:
    code = AuthorizationCode(
        code_hash=code_hash,
        client_id=CLIENT,
        user_id=user_id,
        redirect_uri="http://127.0.0.1:51234/cb",
        code_challenge="E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        nonce="n-0S6_WzA2Mj",
        scopes=("openid", "email", "offline_access"),
        session_id="hosted-1",
        auth_time=T0,
        amr=("pwd", "otp", "mfa"),
        acr="2",
        created_at=T0,
        expires_at=T0 + timedelta(seconds=60),
    )
    return attrs.evolve(code, **changes)  # type: ignore[arg-type]


def _hosted(user_id: str, session_id: str, id_hash: str = "h" * 64, **kw: object) -> HostedSession:
    hosted = HostedSession(
        id_hash=id_hash,
        session_id=session_id,
        user_id=user_id,
        auth_time=T0,
        amr=("hwk", "user"),
        acr="2",
        idle_expires_at=T0 + timedelta(hours=8),
        expires_at=T0 + timedelta(days=30),
    )
    return attrs.evolve(hosted, **kw)  # type: ignore[arg-type]


async def _setup(storage: Storage, make: Make, *users: str) -> None:
    async with storage.begin() as uow:
        for user_id in users:
            await uow.users.add(make.user(id=user_id))
        await uow.clients.add(_client())
        await uow.clients.add(_client(OTHER, public=False, secret_hash="b" * 64))
        await uow.commit()


async def _session(storage: Storage, make: Make, user_id: str, client_id: str | None) -> Session:
    session = attrs.evolve(make.session(user_id), client_id=client_id)
    async with storage.begin() as uow:
        await uow.sessions.add(session)
        await uow.tokens.add(make.token(user_id, session.id))
        await uow.commit()
    return session


async def _hosted_session(
    storage: Storage, make: Make, user_id: str, **kw: object
) -> HostedSession:
    session = attrs.evolve(make.session(user_id), expires_at=T0 + timedelta(days=30))
    hosted = _hosted(user_id, session.id, **kw)
    async with storage.begin() as uow:
        await uow.sessions.add(session)
        await uow.hosted_sessions.add(hosted)
        await uow.commit()
    return hosted


# --- clients and sessions: the new fields round trip -------------------------------------


async def test_the_code_flow_client_fields_round_trip(storage: Storage) -> None:
    async with storage.begin() as uow:
        await uow.clients.add(_client())
        await uow.clients.add(_client(OTHER, logo_uri=None, id_token_signed_response_alg=None))
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.clients.get(CLIENT) == _client()
        changed = _client(grant_types=("client_credentials",), redirect_uris=(), public=False)
        await uow.clients.update(changed)
        await uow.commit()
    async with storage.read() as uow:
        assert await uow.clients.get(CLIENT) == changed
        assert (await uow.clients.list_page(None, None, 10))[1] == _client(
            OTHER, logo_uri=None, id_token_signed_response_alg=None
        )


async def test_a_client_without_the_new_fields_keeps_the_defaults(storage: Storage) -> None:
    plain = Client(CLIENT, "m2m", "org-a", ("read",), ("aud",), False, False, T0, "a" * 64)
    async with storage.begin() as uow:
        await uow.clients.add(plain)
        await uow.commit()
    async with storage.read() as uow:
        found = await uow.clients.get(CLIENT)
    assert found == plain
    assert found is not None and found.grant_types == ("client_credentials",)
    assert found.token_endpoint_auth_method == "client_secret_basic" and not found.public


async def test_session_client_id_round_trips(storage: Storage, make: Make) -> None:
    await _setup(storage, make, "alice")
    ours = await _session(storage, make, "alice", CLIENT)
    api = await _session(storage, make, "alice", None)
    async with storage.read() as uow:
        assert await uow.sessions.get(ours.id) == ours
        assert (await uow.sessions.get(api.id)) == api
        live = await uow.sessions.list_live("alice", T0)
    assert {s.id: s.client_id for s in live} == {ours.id: CLIENT, api.id: None}


async def test_deleting_a_client_ends_its_sessions_consents_and_codes(
    storage: Storage, make: Make
) -> None:
    await _setup(storage, make, "alice")
    ours = await _session(storage, make, "alice", CLIENT)
    api = await _session(storage, make, "alice", None)
    async with storage.begin() as uow:
        await uow.consents.grant(Consent("alice", CLIENT, ("openid",), T0))
        await uow.codes.add(_code("alice"))
        assert await uow.clients.delete(CLIENT)
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.sessions.get(ours.id) is None
        assert await uow.sessions.get(api.id) == api
        assert await uow.consents.list_for_user("alice") == []
        assert await uow.codes.take("a" * 64, T0) is None


# --- authorization codes ------------------------------------------------------------------


async def test_a_code_round_trips_and_is_taken_once(storage: Storage, make: Make) -> None:
    await _setup(storage, make, "alice")
    code = _code("alice")
    async with storage.begin() as uow:
        await uow.codes.add(code)
        await uow.commit()
    used_at = T0 + timedelta(seconds=3, microseconds=5)
    async with storage.begin() as uow:
        first = await uow.codes.take(code.code_hash, used_at)
        await uow.commit()
    assert first == TakenCode(attrs.evolve(code, used_at=used_at), first_use=True)
    async with storage.begin() as uow:
        again = await uow.codes.take(code.code_hash, used_at + timedelta(seconds=1))
        await uow.commit()
    # a reuse: returned unchanged, with the first use's time
    assert again == TakenCode(first.code, first_use=False)
    async with storage.begin() as uow:
        assert await uow.codes.take("f" * 64, used_at) is None


async def test_a_code_without_a_nonce_round_trips(storage: Storage, make: Make) -> None:
    await _setup(storage, make, "alice")
    code = _code("alice", nonce=None, scopes=("openid",), amr=("pwd",), acr="1")
    async with storage.begin() as uow:
        await uow.codes.add(code)
        taken = await uow.codes.take(code.code_hash, T0)
    assert taken == TakenCode(attrs.evolve(code, used_at=T0), first_use=True)


async def test_a_second_take_at_the_same_instant_is_a_reuse(storage: Storage, make: Make) -> None:
    """The clock gives no way to tell the uses apart: only the store's atomic mark does."""
    await _setup(storage, make, "alice")
    code = _code("alice")
    async with storage.begin() as uow:
        await uow.codes.add(code)
        first = await uow.codes.take(code.code_hash, T0)
        await uow.commit()
    async with storage.begin() as uow:
        again = await uow.codes.take(code.code_hash, T0)
    assert first is not None and first.first_use
    assert again == TakenCode(attrs.evolve(code, used_at=T0), first_use=False)


async def test_add_code_refuses_a_duplicate_hash_and_an_unknown_user(
    storage: Storage, make: Make
) -> None:
    await _setup(storage, make, "alice")
    async with storage.begin() as uow:
        await uow.codes.add(_code("alice"))
        await uow.commit()
    async with storage.begin() as uow:
        with pytest.raises(Conflict):
            await uow.codes.add(_code("alice"))
    async with storage.begin() as uow:
        with pytest.raises(NotFound):
            await uow.codes.add(_code("ghost", code_hash="b" * 64))


async def test_set_family_is_seen_by_a_reuse(storage: Storage, make: Make) -> None:
    await _setup(storage, make, "alice")
    code = _code("alice")
    async with storage.begin() as uow:
        await uow.codes.add(code)
        await uow.codes.take(code.code_hash, T0)
        await uow.codes.set_family(code.code_hash, "fam-77")
        await uow.codes.set_family("f" * 64, "fam-78")  # unknown: nothing happens
        await uow.commit()
    async with storage.begin() as uow:
        reused = await uow.codes.take(code.code_hash, T0 + timedelta(seconds=5))
    assert reused is not None and not reused.first_use
    assert reused.code.family_id == "fam-77" and reused.code.used_at == T0


async def _take_in_own_unit(storage: Storage, code_hash: str) -> TakenCode | None:
    async with storage.begin() as uow:
        got = await uow.codes.take(code_hash, T0 + timedelta(seconds=1))
        await asyncio.sleep(0.01)  # hold the unit open so the others overlap with it
        await uow.commit()
    return got


async def test_concurrent_takes_have_exactly_one_that_sees_the_code_unused(
    storage: Storage, open_peer: StorageFactory, make: Make
) -> None:
    """Two pools (postgres) or two connections to one file (sqlite) race for one code."""
    peer = await open_peer()
    await _setup(storage, make, "alice")
    code = _code("alice")
    async with storage.begin() as uow:
        await uow.codes.add(code)
        await uow.commit()
    stores = [storage, peer] * (CONCURRENT_TAKES // 2)
    results = await asyncio.gather(*(_take_in_own_unit(s, code.code_hash) for s in stores))
    assert all(r is not None for r in results)
    used_at = T0 + timedelta(seconds=1)
    assert [r.code for r in results if r] == [
        attrs.evolve(code, used_at=used_at)
    ] * CONCURRENT_TAKES
    assert sum(1 for r in results if r and r.first_use) == 1
    # each saw the same stored used_at; exactly one of them set it: no second take marks again
    async with peer.begin() as uow:
        later = await uow.codes.take(code.code_hash, T0 + timedelta(minutes=1))
    assert later is not None and later.code.used_at == used_at and not later.first_use


async def test_concurrent_takes_report_exactly_one_first_use(
    storage: Storage, open_peer: StorageFactory, make: Make
) -> None:
    """Each taker uses its own ``now``: exactly one gets back its own time (it set used_at),
    every other one gets that winner's time (it saw the code used)."""
    peer = await open_peer()
    await _setup(storage, make, "alice")
    code = _code("alice")
    async with storage.begin() as uow:
        await uow.codes.add(code)
        await uow.commit()

    async def take(store: Storage, n: int) -> tuple[int, TakenCode | None]:
        async with store.begin() as uow:
            got = await uow.codes.take(code.code_hash, T0 + timedelta(microseconds=n))
            await asyncio.sleep(0.01)
            await uow.commit()
        return n, got

    stores = [storage, peer] * (CONCURRENT_TAKES // 2)
    results = await asyncio.gather(*(take(s, n + 1) for n, s in enumerate(stores)))
    firsts = [n for n, got in results if got and got.first_use]
    assert len(firsts) == 1
    assert {got.code.used_at for _, got in results if got} == {
        T0 + timedelta(microseconds=firsts[0])
    }


async def test_purge_deletes_expired_codes_used_or_not(storage: Storage, make: Make) -> None:
    await _setup(storage, make, "alice")
    live = _code("alice", code_hash="1" * 64, expires_at=T0 + timedelta(minutes=5))
    stale = _code("alice", code_hash="2" * 64)
    used = _code("alice", code_hash="3" * 64, used_at=T0)
    async with storage.begin() as uow:
        for code in (live, stale, used):
            await uow.codes.add(code)
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.codes.purge_expired(T0 + timedelta(seconds=60), limit=1) == 1
        assert await uow.codes.purge_expired(T0 + timedelta(seconds=60)) == 1
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.codes.take(stale.code_hash, T0) is None
        assert await uow.codes.take(used.code_hash, T0) is None
        assert await uow.codes.take(live.code_hash, T0) is not None


async def test_deleting_the_user_deletes_its_codes(storage: Storage, make: Make) -> None:
    await _setup(storage, make, "alice")
    async with storage.begin() as uow:
        await uow.codes.add(_code("alice"))
        await uow.users.delete("alice")
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.codes.take("a" * 64, T0) is None


# --- consents -----------------------------------------------------------------------------


async def test_grant_upserts_the_union_of_the_scopes(storage: Storage, make: Make) -> None:
    await _setup(storage, make, "alice")
    async with storage.begin() as uow:
        assert await uow.consents.get("alice", CLIENT) is None
        await uow.consents.grant(Consent("alice", CLIENT, ("openid", "email"), T0))
        await uow.commit()
    later = T0 + timedelta(hours=1)
    async with storage.begin() as uow:
        await uow.consents.grant(Consent("alice", CLIENT, ("profile", "openid"), later))
        await uow.commit()
    async with storage.read() as uow:
        found = await uow.consents.get("alice", CLIENT)
    assert found == Consent("alice", CLIENT, ("openid", "email", "profile"), later)


async def test_concurrent_grants_keep_every_scope(
    storage: Storage, open_peer: StorageFactory, make: Make
) -> None:
    """Grants racing from two pools (postgres) or two connections (sqlite), on no consent yet:
    the stored scopes are the union of all of them (no grant overwrites another's)."""
    peer = await open_peer()
    await _setup(storage, make, "alice")
    scopes = ("openid", "profile", "email", "offline_access")

    async def grant(store: Storage, scope: str) -> None:
        async with store.begin() as uow:
            await uow.consents.grant(Consent("alice", CLIENT, (scope,), T0))
            await asyncio.sleep(0.01)
            await uow.commit()

    await asyncio.gather(*(grant((storage, peer)[n % 2], s) for n, s in enumerate(scopes * 2)))
    async with storage.read() as uow:
        found = await uow.consents.get("alice", CLIENT)
    assert found is not None and sorted(found.scopes) == sorted(scopes)


async def test_grant_refuses_an_unknown_user_or_client(storage: Storage, make: Make) -> None:
    await _setup(storage, make, "alice")
    async with storage.begin() as uow:
        with pytest.raises(NotFound):
            await uow.consents.grant(Consent("ghost", CLIENT, ("openid",), T0))
    async with storage.begin() as uow:
        with pytest.raises(NotFound):
            await uow.consents.grant(Consent("alice", "e" * 32, ("openid",), T0))


async def test_list_is_the_users_consents_newest_first_and_revoke_deletes_one(
    storage: Storage, make: Make
) -> None:
    await _setup(storage, make, "alice", "bob")
    first = Consent("alice", CLIENT, ("openid",), T0)
    second = Consent("alice", OTHER, ("openid", "profile"), T0 + timedelta(minutes=1))
    async with storage.begin() as uow:
        await uow.consents.grant(first)
        await uow.consents.grant(second)
        await uow.consents.grant(Consent("bob", CLIENT, ("openid",), T0))
        await uow.commit()
    async with storage.begin() as uow:
        assert await uow.consents.list_for_user("alice") == [second, first]
        assert await uow.consents.revoke("alice", OTHER)
        assert not await uow.consents.revoke("alice", OTHER)
        await uow.commit()
    async with storage.read() as uow:
        assert await uow.consents.list_for_user("alice") == [first]
        assert await uow.consents.get("bob", CLIENT) is not None


async def test_deleting_the_user_deletes_its_consents(storage: Storage, make: Make) -> None:
    await _setup(storage, make, "alice")
    async with storage.begin() as uow:
        await uow.consents.grant(Consent("alice", CLIENT, ("openid",), T0))
        await uow.users.delete("alice")
        await uow.commit()
    async with storage.read() as uow:
        assert await uow.consents.list_for_user("alice") == []


# --- hosted sessions ----------------------------------------------------------------------


async def test_a_hosted_session_round_trips_and_keeps_its_session_live(
    storage: Storage, make: Make
) -> None:
    await _setup(storage, make, "alice")
    hosted = await _hosted_session(storage, make, "alice")
    async with storage.read() as uow:
        assert await uow.hosted_sessions.find(hosted.id_hash, T0) == hosted
        assert await uow.hosted_sessions.find("0" * 64, T0) is None
        live = await uow.sessions.list_live("alice", T0 + timedelta(hours=1))
    assert [s.id for s in live] == [hosted.session_id]  # no refresh token, yet live


async def test_add_hosted_refuses_a_duplicate_hash_and_a_missing_session(
    storage: Storage, make: Make
) -> None:
    await _setup(storage, make, "alice")
    hosted = await _hosted_session(storage, make, "alice")
    async with storage.begin() as uow:
        with pytest.raises(Conflict):
            await uow.hosted_sessions.add(hosted)
    async with storage.begin() as uow:
        with pytest.raises(NotFound):
            await uow.hosted_sessions.add(_hosted("alice", "no-such-session", id_hash="1" * 64))


async def test_find_is_none_past_the_idle_end_and_touch_moves_it_on(
    storage: Storage, make: Make
) -> None:
    await _setup(storage, make, "alice")
    hosted = await _hosted_session(storage, make, "alice")
    idle_end = hosted.idle_expires_at
    async with storage.begin() as uow:
        assert await uow.hosted_sessions.find(hosted.id_hash, idle_end - timedelta(seconds=1))
        assert await uow.hosted_sessions.find(hosted.id_hash, idle_end) is None
        await uow.hosted_sessions.touch(hosted.id_hash, idle_end + timedelta(hours=8))
        await uow.hosted_sessions.touch("0" * 64, idle_end)  # unknown: nothing happens
        await uow.commit()
    async with storage.read() as uow:
        found = await uow.hosted_sessions.find(hosted.id_hash, idle_end)
    assert found == attrs.evolve(hosted, idle_expires_at=idle_end + timedelta(hours=8))


async def test_reauthenticated_moves_the_login_time_only(storage: Storage, make: Make) -> None:
    await _setup(storage, make, "alice")
    hosted = await _hosted_session(storage, make, "alice")
    later = hosted.auth_time + timedelta(minutes=20)
    async with storage.begin() as uow:
        await uow.hosted_sessions.reauthenticated(hosted.id_hash, later)
        await uow.hosted_sessions.reauthenticated("0" * 64, later)  # unknown: nothing happens
        await uow.commit()
    async with storage.read() as uow:
        found = await uow.hosted_sessions.find(hosted.id_hash, T0)
    assert found == attrs.evolve(hosted, auth_time=later)


async def test_touch_never_passes_the_absolute_end_and_find_stops_there(
    storage: Storage, make: Make
) -> None:
    await _setup(storage, make, "alice")
    hosted = await _hosted_session(storage, make, "alice")
    async with storage.begin() as uow:
        await uow.hosted_sessions.touch(hosted.id_hash, hosted.expires_at + timedelta(days=9))
        await uow.commit()
    async with storage.read() as uow:
        before = await uow.hosted_sessions.find(hosted.id_hash, hosted.expires_at - timedelta(1))
        at_end = await uow.hosted_sessions.find(hosted.id_hash, hosted.expires_at)
    assert before is not None and before.idle_expires_at == hosted.expires_at
    assert at_end is None


@pytest.mark.parametrize("how", ["end", "end_all", "end_for_client", "delete_user"])
async def test_a_hosted_session_ends_with_its_sessions_row(
    storage: Storage, make: Make, how: str
) -> None:
    await _setup(storage, make, "alice")
    hosted = await _hosted_session(storage, make, "alice")
    async with storage.begin() as uow:
        if how == "end":
            await uow.sessions.end(hosted.session_id)
        elif how == "end_all":
            assert await uow.sessions.end_all("alice") == [hosted.session_id]
        elif how == "end_for_client":  # the hosted session's row has no client: untouched
            assert await uow.sessions.end_for_client("alice", CLIENT) == []
        else:
            await uow.users.delete("alice")
        await uow.commit()
    async with storage.read() as uow:
        found = await uow.hosted_sessions.find(hosted.id_hash, T0)
    assert (found is None) == (how != "end_for_client")


async def test_end_ends_the_hosted_session_and_its_sessions_row(
    storage: Storage, make: Make
) -> None:
    await _setup(storage, make, "alice")
    hosted = await _hosted_session(storage, make, "alice")
    async with storage.begin() as uow:
        await uow.tokens.add(make.token("alice", hosted.session_id))
        assert await uow.hosted_sessions.end(hosted.id_hash) == hosted.session_id
        assert await uow.hosted_sessions.end(hosted.id_hash) is None
        await uow.commit()
    async with storage.read() as uow:
        assert await uow.hosted_sessions.find(hosted.id_hash, T0) is None
        assert await uow.sessions.get(hosted.session_id) is None
        assert await uow.sessions.list_live("alice", T0) == []


async def test_purge_deletes_expired_hosted_sessions_and_then_their_rows(
    storage: Storage, make: Make
) -> None:
    await _setup(storage, make, "alice")
    idle = await _hosted_session(storage, make, "alice", id_hash="1" * 64)
    fresh = await _hosted_session(
        storage, make, "alice", id_hash="2" * 64, idle_expires_at=T0 + timedelta(days=2)
    )
    now = T0 + timedelta(days=1)
    async with storage.begin() as uow:
        assert await uow.hosted_sessions.purge_expired(now) == 1
        await uow.sessions.purge_expired(now)
        await uow.commit()
    async with storage.read() as uow:
        assert await uow.hosted_sessions.find(fresh.id_hash, now) == fresh
        assert await uow.sessions.get(fresh.session_id) is not None
        assert await uow.sessions.get(idle.session_id) is None


# --- SessionStore.end_for_client ----------------------------------------------------------


async def test_end_for_client_ends_only_that_clients_sessions_of_the_user(
    storage: Storage, make: Make
) -> None:
    await _setup(storage, make, "alice", "bob")
    ours = await _session(storage, make, "alice", CLIENT)
    ours_too = await _session(storage, make, "alice", CLIENT)
    other_client = await _session(storage, make, "alice", OTHER)
    api = await _session(storage, make, "alice", None)
    bobs = await _session(storage, make, "bob", CLIENT)
    async with storage.begin() as uow:
        ended = await uow.sessions.end_for_client("alice", CLIENT)
        await uow.commit()
    assert ended == sorted([ours.id, ours_too.id])
    async with storage.read() as uow:
        live = await uow.sessions.list_live("alice", T0)
        assert await uow.sessions.get(ours.id) is None
        assert await uow.sessions.get(bobs.id) == bobs
    assert {s.id for s in live} == {other_client.id, api.id}
