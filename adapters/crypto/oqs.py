"""ML-DSA through liboqs (``auth.mldsa_backend = "liboqs"``; extra ``oqs`` = liboqs-python).

liboqs-python, when it cannot find the liboqs shared library at import time, tries to
``git clone`` and build liboqs into ``~/_oqs``. That must never happen in a service, so this
module looks for the library first (``OQS_INSTALL_PATH``, ``~/_oqs``, the loader's search path
via ``ctypes.util.find_library``) and imports ``oqs`` only once the library is known to be
there; otherwise ``LiboqsMLDSA()`` raises ``SignerUnavailable`` saying how to install it.

Keys are loaded from the same 32-byte FIPS 204 seed files as the ``cryptography`` backend.
liboqs has no public "key pair from seed" call, so the seed is fed to ``OQS_SIG_keypair``
through liboqs's custom random-bytes hook: FIPS 204 ``ML-DSA.KeyGen`` (Algorithm 1) draws
exactly one 32-byte ``xi`` and runs ``KeyGen_internal(xi)``. The hook records every draw and
the load fails unless it saw exactly that one draw; when the ``cryptography`` backend is also
available, the public key is cross-checked against it. Signing uses ``OQS_SIG_sign``, which for
ML-DSA (liboqs >= 0.12) is pure ML-DSA with an empty context, as RFC 9964 requires; signatures
of either backend verify under the other.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import importlib
import importlib.util
import logging
import os
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

from adapters.crypto.mldsa import (
    MLDSA_ALGORITHMS,
    CryptographyMLDSA,
    MLDSABackend,
    MLDSAPrivateKey,
    MLDSAPublicKey,
    SignerUnavailable,
)

log = logging.getLogger(__name__)

MIN_LIBOQS = (0, 12)
"""liboqs 0.12 is the first release whose ML-DSA is the final FIPS 204 (not the draft)."""

INSTALL_HELP = (
    "liboqs (the C library) is not installed, and liboqs-python must not download and build it "
    "at run time. Debian 12 has no liboqs package; build the release matching liboqs-python "
    "once: `apt-get install cmake ninja-build gcc libssl-dev && "
    "git clone --depth 1 --branch 0.16.0 https://github.com/open-quantum-safe/liboqs && "
    "cmake -S liboqs -B liboqs/build -GNinja -DBUILD_SHARED_LIBS=ON -DOQS_BUILD_ONLY_LIB=ON "
    "-DCMAKE_INSTALL_PREFIX=$HOME/_oqs && cmake --build liboqs/build --target install`, "
    "then set OQS_INSTALL_PATH=$HOME/_oqs (or install it under /usr/local and run ldconfig). "
    "Or use auth.mldsa_backend = 'cryptography'."
)

_LIB_GLOBS = ("liboqs.so", "liboqs.so.*", "liboqs.dylib", "oqs.dll", "liboqs.dll")
_keygen_lock = threading.Lock()
_module: ModuleType | None = None


def find_liboqs() -> str | None:
    """The path (or loader name) of an installed liboqs shared library, or None.

    Looks in ``$OQS_INSTALL_PATH/{lib,lib64,bin}`` (default ``~/_oqs``, liboqs-python's own
    prefix), then asks the dynamic loader (``ctypes.util.find_library("oqs")``), then the
    directories of ``LD_LIBRARY_PATH``. Imports nothing and touches no network.
    """
    prefix = Path(os.environ.get("OQS_INSTALL_PATH") or Path.home() / "_oqs").expanduser()
    dirs = [prefix / "lib", prefix / "lib64", prefix / "bin", prefix]
    for d in dirs:
        for pattern in _LIB_GLOBS:
            hits = sorted(glob.glob(str(d / pattern)))
            if hits:
                return hits[0]
    found = ctypes.util.find_library("oqs")
    if found:
        return found
    for entry in filter(None, os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep)):
        hits = sorted(glob.glob(os.path.join(entry, "liboqs.so*")))
        if hits:
            return hits[0]
    return None


def _liboqs_module() -> ModuleType:
    """Import liboqs-python, but only after the shared library was found (see module doc)."""
    global _module
    if _module is not None:
        return _module
    if importlib.util.find_spec("oqs") is None:
        raise SignerUnavailable(
            "auth.mldsa_backend = 'liboqs' needs liboqs-python: install the extra "
            "(`pip install 'authsvc[oqs]'`) and the liboqs C library. " + INSTALL_HELP
        )
    lib = find_liboqs()
    if lib is None:
        raise SignerUnavailable(INSTALL_HELP)
    libdir = Path(lib).parent
    if libdir.name in ("lib", "lib64", "bin") and os.path.isabs(lib):
        # Make liboqs-python find this very library (it searches $OQS_INSTALL_PATH/lib).
        os.environ.setdefault("OQS_INSTALL_PATH", str(libdir.parent))
    try:
        ctypes.CDLL(lib, mode=getattr(ctypes, "RTLD_GLOBAL", 0))
    except OSError as e:
        raise SignerUnavailable(f"liboqs at {lib} cannot be loaded: {e}. " + INSTALL_HELP) from e
    module = importlib.import_module("oqs")
    version = str(module.oqs_version())
    try:
        numbers = tuple(int(p) for p in version.split("-")[0].split(".")[:2])
    except ValueError:
        numbers = (0, 0)
    if numbers < MIN_LIBOQS:
        raise SignerUnavailable(
            f"liboqs {version} implements a draft ML-DSA; need liboqs >= 0.12. " + INSTALL_HELP
        )
    enabled = set(module.get_enabled_sig_mechanisms())
    missing = [a for a in MLDSA_ALGORITHMS if a not in enabled]
    if missing:
        raise SignerUnavailable(f"liboqs {version} was built without {', '.join(missing)}")
    _module = module
    return module


class _OqsPublic(MLDSAPublicKey):
    def __init__(self, oqs: ModuleType, alg: str, public: bytes) -> None:
        self.alg = alg
        self._public = public
        self._verifier = oqs.Signature(alg)
        if len(public) != int(self._verifier.details["length_public_key"]):
            raise ValueError(
                f"an {alg} public key is {self._verifier.details['length_public_key']} bytes"
            )

    def public_bytes(self) -> bytes:
        return self._public

    def verify(self, signature: bytes, data: bytes) -> bool:
        if len(signature) != int(self._verifier.details["length_signature"]):
            return False
        return bool(self._verifier.verify(data, signature, self._public))


class _OqsPrivate(MLDSAPrivateKey):
    def __init__(self, oqs: ModuleType, alg: str, secret: bytes, public: bytes) -> None:
        self.alg = alg
        self._signer = oqs.Signature(alg, secret)
        self._public = _OqsPublic(oqs, alg, public)

    def sign(self, data: bytes) -> bytes:
        signature = self._signer.sign(data)
        if not isinstance(signature, bytes) or not signature:
            raise RuntimeError(f"liboqs failed to sign with {self.alg}")
        return signature

    def public_key(self) -> MLDSAPublicKey:
        return self._public


class LiboqsMLDSA(MLDSABackend):
    """The liboqs ML-DSA backend. Construction checks that liboqs (>= 0.12, with ML-DSA-65
    and -87) is installed, without ever letting liboqs-python fetch it; raises
    ``SignerUnavailable`` with installation instructions otherwise."""

    name = "liboqs"

    def __init__(self) -> None:
        self._oqs = _liboqs_module()

    def private_key_from_seed(self, alg: str, seed: bytes) -> MLDSAPrivateKey:
        """FIPS 204 ``KeyGen_internal(seed)`` via liboqs (see the module doc). Raises
        ``ValueError`` for a seed that is not 32 bytes, ``SignerUnavailable`` if liboqs does not
        derive the key from exactly that seed."""
        if alg not in MLDSA_ALGORITHMS:
            raise ValueError(f"not an ML-DSA algorithm: {alg}")
        if len(seed) != 32:
            raise ValueError("an ML-DSA seed is 32 bytes")
        public, secret = self._keypair_from_seed(alg, seed)
        self._cross_check(alg, seed, public)
        return _OqsPrivate(self._oqs, alg, secret, public)

    def public_key_from_bytes(self, alg: str, data: bytes) -> MLDSAPublicKey:
        """A verifier for a raw public key. Raises ``ValueError`` on a wrong length."""
        return _OqsPublic(self._oqs, alg, bytes(data))

    def _keypair_from_seed(self, alg: str, seed: bytes) -> tuple[bytes, bytes]:
        native: Any = self._oqs.native()
        draws: list[int] = []

        def fill(buf: Any, n: int) -> None:
            draws.append(n)
            data = seed if len(draws) == 1 and n == len(seed) else os.urandom(n)
            ctypes.memmove(buf, data, n)

        callback_type = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_uint8), ctypes.c_size_t)
        feed = callback_type(fill)  # referenced until the hook is reset below

        with _keygen_lock:
            native.OQS_randombytes_custom_algorithm(feed)
            try:
                sig = self._oqs.Signature(alg)
                public = sig.generate_keypair()
                secret = sig.export_secret_key()
            finally:
                native.OQS_randombytes_switch_algorithm(b"system")
        if draws != [32] or not isinstance(public, bytes):
            raise SignerUnavailable(
                f"liboqs did not derive the {alg} key from a single 32-byte seed "
                f"(random draws: {draws}); seed-form keys cannot be loaded with this liboqs"
            )
        return public, bytes(secret)

    @staticmethod
    def _cross_check(alg: str, seed: bytes, public: bytes) -> None:
        try:
            reference = CryptographyMLDSA().private_key_from_seed(alg, seed).public_key()
        except SignerUnavailable:
            return  # OpenSSL without ML-DSA: nothing to compare with
        if reference.public_bytes() != public:
            raise SignerUnavailable(
                f"liboqs and cryptography derive different {alg} keys from one seed"
            )
