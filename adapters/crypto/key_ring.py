"""The signer's key ring: which key signs, which keys still verify, and when old keys retire.

Key switching (``docs/adr/0005-signing-keys-and-algorithm-switching.md``) and rotation
(``docs/adr/0015-keys-in-the-database-and-event-buses.md``): the signing key of the configured
algorithm signs; keys that signed earlier keep verifying, and stay in the JWKS (RFC 7517), until
every token they may have signed has expired (end of signing + access-token lifetime + leeway,
by the injected ``Clock``); a rotated key is in the JWKS ``auth.key_publish_ahead`` seconds
before it signs. The schedule is kept as ``KeyRecord`` s in a ``SigningKeyStore`` (the key
directory's ``keys.json``, or a database table), so that processes and instances sharing it
agree (``adapters.crypto.key_records``); a process learns of keys another one added when it is
told (``refresh``: an event, the poll) or when a token with an unknown ``kid`` arrives
(``KeyRing.adopt_peer_keys``).

Each key is a ``SigningKey`` and the ring's view a ``KeySet`` (``adapters.crypto.signing_keys``,
where ``mldsa_backend`` picks the ML-DSA backend by its configured name).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta

import attrs

from adapters.crypto.key_records import (
    KeyChanges,
    KeyOperationRefused,
    KeyPlan,
    KeyRecord,
    KeyStoreError,
    MakeKey,
    NewKey,
    SigningKeyStore,
    ordered_for_jwks,
    plan_activation,
    plan_retirement,
    plan_rotation,
    signing_key,
)
from adapters.crypto.keystore import KeyStore
from adapters.crypto.mldsa import MLDSABackend, SignerUnavailable
from adapters.crypto.signing_keys import KeySet, SigningKey, load_signing_key, mldsa_backend
from application.ports import Clock
from application.shared.settings import ALGORITHMS, AuthSettings

log = logging.getLogger(__name__)

PEER_CHECK_INTERVAL = 5
"""Seconds between re-reads of the key store prompted by tokens with an unknown ``kid``."""


StoreFor = Callable[[AuthSettings], SigningKeyStore]
"""The key store of given ``auth`` settings (the files of their ``key_dir``, or the database)."""


def _default_stores() -> StoreFor:
    """Key files in ``settings.key_dir``: one ``KeyStore`` per directory."""
    stores: dict[str, KeyStore] = {}

    def store(settings: AuthSettings) -> SigningKeyStore:
        if settings.key_dir not in stores:
            stores[settings.key_dir] = KeyStore(settings.key_dir)
        return stores[settings.key_dir]

    return store


TokenTtl = Callable[[], int]
"""The longest lifetime (s) of the tokens signed besides the user access tokens (the client
tokens' ``oauth.client_token_ttl``), read at each key decision."""


class KeyRing:
    """The keys of one signer, kept in step with a ``SigningKeyStore`` (key files in
    ``settings.key_dir`` by default; the database with ``auth.key_store = "database"``).

    Building a ring (and ``apply``) makes ``settings.algorithm`` the signing algorithm in the
    store (``key_records.plan_activation``: its key is created if missing; keys of another
    algorithm verify ``access_token_ttl + leeway`` more), then loads every key that signs, is
    pending or still verifies. Which key signs is decided by the records' times at each call
    (a rotated key takes over at its ``activates_at`` on every instance at once). Blocking
    (store I/O, RSA key generation ~0.2-1 s). Raises ``SignerUnavailable`` (unknown algorithm,
    unusable backend) and ``KeyStoreError`` (unusable store or signing key); another key that
    cannot be loaded is logged and left out.

    ``refresh`` re-reads the store (keys rotated or retired elsewhere); ``rotate`` and
    ``retire`` are the operator's (``authsvc keys``) and the schedule's. Thread-safe: every
    change replaces the immutable ``current`` view under a lock; readers take one view and
    never see a half-built ring.
    """

    def __init__(
        self,
        settings: AuthSettings,
        clock: Clock,
        stores: StoreFor | None = None,
        other_ttl: TokenTtl | None = None,
    ) -> None:
        self._stores = stores or _default_stores()
        self._other_ttl = other_ttl or (lambda: 0)
        self._clock = clock
        self._lock = threading.Lock()
        self._backends: dict[str, MLDSABackend] = {}
        self._keys = self._build(settings, previous=None)
        self._next_peer_check = clock.now()

    @property
    def current(self) -> KeySet:
        """The ring as it stands now (replaced whole, never changed in place)."""
        return self._keys

    @property
    def store(self) -> SigningKeyStore:
        """The key store of the settings in force."""
        return self._stores(self._keys.settings)

    @property
    def active(self) -> SigningKey:
        """The key that signs new tokens of the default algorithm now."""
        keys = self._keys
        return keys.keys[keys.signing_record(self._clock.now()).kid]

    def active_for(self, alg: str) -> SigningKey:
        """The key that signs new ``alg`` tokens now; ``KeyError`` if ``alg`` is not one of
        ``auth.algorithms``."""
        keys = self._keys
        return keys.keys[keys.signing_record(self._clock.now(), alg).kid]

    def signing_keys(self) -> list[SigningKey]:
        """The key signing each of ``auth.algorithms`` now, the default algorithm's first."""
        keys = self._keys
        now = self._clock.now()
        return [
            keys.keys[keys.signing_record(now, a).kid] for a in keys.settings.signing_algorithms
        ]

    def _span(self, settings: AuthSettings) -> int:
        """How long any token lives after it was signed, skew included (s)."""
        return max(settings.access_token_ttl, self._other_ttl()) + settings.leeway

    def apply(self, settings: AuthSettings) -> None:
        """Rebuild the ring for ``settings``: a changed ``algorithm`` activates that algorithm's
        key (created if missing) and the previous algorithm's keys keep verifying for the
        longer of the old and new access-token lifetime + leeway. Raises like the constructor
        and then leaves the ring unchanged."""
        with self._lock:
            self._keys = self._build(settings, previous=self._keys)

    def verification_keys(self) -> list[SigningKey]:
        """The keys that may still verify a live token now (the JWKS): the signing key first,
        then the others, latest activated first; pending keys included."""
        keys = self._keys
        now = self._clock.now()
        out = self.signing_keys()
        signing = {k.kid for k in out}
        for r in keys.records:
            if r.kid not in signing and r.published(now) and r.kid in keys.keys:
                out.append(keys.keys[r.kid])
        return out

    def find(self, kid: str) -> SigningKey | None:
        """The verification key whose ``kid`` is ``kid``, or None."""
        keys = self._keys
        key = keys.keys.get(kid)
        if key is None:
            return None
        if key.verify_until is not None and key.verify_until <= self._clock.now():
            return key if kid in {k.kid for k in self.signing_keys()} else None
        return key

    def peer_check_due(self) -> bool:
        """True if ``adopt_peer_keys`` would re-read the store now (cheap; no I/O)."""
        return self._clock.now() >= self._next_peer_check

    def adopt_peer_keys(self) -> bool:
        """Pick up keys another process or instance added (a token with an unknown ``kid``):
        ``refresh``, at most once per ``PEER_CHECK_INTERVAL`` seconds (by the injected clock).
        True if the key set changed; a store that cannot be read is logged, never raised."""
        now = self._clock.now()
        if now < self._next_peer_check:
            return False
        self._next_peer_check = now + timedelta(seconds=PEER_CHECK_INTERVAL)
        try:
            return self.refresh()
        except (KeyStoreError, SignerUnavailable) as e:
            log.warning("cannot re-read the signing keys: %s", e)
            return False

    def refresh(self) -> bool:
        """Re-read the store and load keys added there (rotated by a peer or ``authsvc keys``),
        dropping retired ones; if nothing can sign the configured algorithm any more, activate
        it again. True if the key set changed. Raises ``KeyStoreError`` when the store cannot
        be read (the ring is then unchanged)."""
        with self._lock:
            keys = self._keys
            store = self._stores(keys.settings)
            records = store.records()
            now = self._clock.now()
            algs = keys.settings.signing_algorithms
            if any(signing_key(records, a, now) is None for a in algs):
                plan = plan_activation(
                    algs, now, self._span(keys.settings), self._key_maker(keys.settings)
                )
                records = store.update(plan)
            fresh = self._view(keys.settings, records, store, keys.backend_name, keys.keys)
            if fresh.records == keys.records:
                return False
            self._keys = fresh
            return True

    def rotate(
        self, *, now: bool = False, due_after: int | None = None, alg: str | None = None
    ) -> KeyRecord | None:
        """Add a key of ``alg`` (default: ``auth.algorithm``; one of ``auth.algorithms``) that
        signs ``auth.key_publish_ahead`` seconds from now (``now``: at once, for a compromised
        key); that algorithm's signing key stops then and verifies until its last token expired
        (``key_records.plan_rotation``). With ``due_after`` (the schedule) only if the newest
        key of ``alg`` is at least that old. Returns the new key's record, or None when not due.
        Raises ``KeyOperationRefused`` for an algorithm not in ``auth.algorithms``, and
        ``KeyStoreError``."""
        with self._lock:
            settings = self._keys.settings
            alg = alg or settings.algorithm
            if alg not in settings.signing_algorithms:
                raise KeyOperationRefused(
                    f"{alg} is not one of auth.algorithms"
                    f" ({', '.join(settings.signing_algorithms)}): add it there first"
                )
            plan = plan_rotation(
                alg,
                self._clock.now(),
                0 if now else settings.key_publish_ahead,
                self._span(settings),
                self._key_maker(settings),
                due_after=due_after,
            )
            decided: list[KeyChanges] = []

            def recorded(records: list[KeyRecord]) -> KeyChanges:
                decided.append(plan(records))
                return decided[-1]

            self._update(recorded)
            return decided[-1].added[0].record if decided and decided[-1].added else None

    def rotate_due(self, due_after: int) -> list[KeyRecord]:
        """The schedule's rotation: ``rotate(due_after=...)`` for each of ``auth.algorithms``;
        the records of the keys added. Raises ``KeyStoreError``."""
        added = []
        for alg in self._keys.settings.signing_algorithms:
            record = self.rotate(due_after=due_after, alg=alg)
            if record is not None:
                added.append(record)
        return added

    def retire(self, kid: str) -> None:
        """Withdraw key ``kid`` at once: out of the JWKS, its tokens refused
        (``key_records.plan_retirement``). Raises ``KeyOperationRefused`` (unknown kid, the
        signing key, a pending key) and ``KeyStoreError``."""
        with self._lock:
            algs = self._keys.settings.signing_algorithms
            self._update(plan_retirement(kid, algs, self._clock.now()))

    def _update(self, plan: KeyPlan) -> None:
        """Run ``plan`` in the store and rebuild the view from its records (lock held)."""
        keys = self._keys
        store = self._stores(keys.settings)
        records = store.update(plan)
        self._keys = self._view(keys.settings, records, store, keys.backend_name, keys.keys)

    def _backend(self, name: str) -> MLDSABackend:
        if name not in self._backends:
            self._backends[name] = mldsa_backend(name)
        return self._backends[name]

    def _key_maker(self, settings: AuthSettings) -> MakeKey:
        store = self._stores(settings)
        backend_name = settings.mldsa_backend

        def make(alg: str, activates_at: datetime) -> NewKey:
            material = store.new_material(alg)
            key = load_signing_key(alg, material, lambda: self._backend(backend_name))
            record = KeyRecord(key.kid, alg, self._clock.now(), activates_at, ref="")
            log.info("new %s signing key %s, signs from %s", alg, key.kid, activates_at)
            return NewKey(record, dict(key.jwk), material)

        return make

    def _view(
        self,
        settings: AuthSettings,
        records: Sequence[KeyRecord],
        store: SigningKeyStore,
        backend_name: str,
        loaded: Mapping[str, SigningKey],
    ) -> KeySet:
        """The view over ``records``: every key that signs, may sign or still verifies, loaded
        (from ``loaded`` when it is there already). The signing key must load; another that
        cannot is logged and left out."""
        now = self._clock.now()
        algs = settings.signing_algorithms
        signers = {s.kid for a in algs if (s := signing_key(records, a, now)) is not None}
        keep = [
            r
            for r in records
            if r.published(now)
            or any(r.may_sign(a, now) for a in algs)
            or (r.alg in algs and r.activates_at > now)
        ]
        keys: dict[str, SigningKey] = {}
        for r in keep:
            try:
                key = loaded.get(r.kid) or self._load(r, store, backend_name)
            except (KeyStoreError, SignerUnavailable) as e:
                if r.kid in signers:
                    raise
                log.warning("%s key %s cannot be loaded, its tokens will fail: %s", r.alg, r.kid, e)
                continue
            if key is not None:
                keys[r.kid] = attrs.evolve(key, verify_until=r.verify_until)
        ordered = tuple(r for r in ordered_for_jwks(keep, None) if r.kid in keys)
        view = KeySet(settings, ordered, keys, backend_name)
        for alg in algs:
            if not any(r.alg == alg for r in ordered):
                raise KeyStoreError(f"no usable {alg} signing key in the {store.location}")
        return view

    def _load(self, r: KeyRecord, store: SigningKeyStore, backend_name: str) -> SigningKey | None:
        material = store.material(r)
        key = load_signing_key(r.alg, material, lambda: self._backend(backend_name))
        if key.kid != r.kid:
            log.warning("the %s key recorded as %s holds key %s; ignored", r.alg, r.kid, key.kid)
            return None
        return key

    def _build(self, settings: AuthSettings, previous: KeySet | None) -> KeySet:
        for alg in settings.signing_algorithms:
            if alg not in ALGORITHMS:
                raise SignerUnavailable(f"unknown algorithm {alg!r} in auth.algorithms")
        store = self._stores(settings)
        span = self._span(settings)
        loaded: Mapping[str, SigningKey] = {}
        if previous is not None:
            span = max(span, self._span(previous.settings))
            if self._stores(previous.settings) is store:
                loaded = previous.keys
        now = self._clock.now()
        make = self._key_maker(settings)
        algs = settings.signing_algorithms
        records = store.update(plan_activation(algs, now, span, make))
        view = self._view(settings, records, store, settings.mldsa_backend, loaded)
        for alg in algs:
            active = view.keys[view.signing_record(now, alg).kid]
            log.info("signing %s tokens with key %s", active.alg, active.kid)
        return view
