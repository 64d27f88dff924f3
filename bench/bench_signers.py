"""Speed and size of access tokens per signing algorithm and ML-DSA backend.

Run: ``.venv/bin/python -m bench.bench_signers [--n 300]`` (``make bench`` runs it with the HTTP
figures). Prints, per algorithm/backend: median sign and verify time per token (ms, one thread,
keys already loaded) beside the primitive alone (the algorithm's sign/verify over the same
signing input) and the verification overhead above it (µs), token size (bytes), and
throughput of concurrent ``sign`` calls on the event loop versus handed to worker threads
(``asyncio.to_thread``), to decide whether offloading signing pays.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import tempfile
import time
from typing import Any

from jwt.utils import base64url_decode

from adapters.clock import SystemClock
from adapters.crypto.jwt_signer import JwtSigner
from adapters.crypto.mldsa import MLDSA_ALGORITHMS, SignerUnavailable
from adapters.crypto.signing_keys import mldsa_backend
from application.ports import Clock
from application.shared.settings import ALGORITHMS, MLDSA_BACKENDS, AuthSettings

CASES = [
    (alg, backend)
    for alg in ALGORITHMS
    for backend in (MLDSA_BACKENDS if alg in MLDSA_ALGORITHMS else ("cryptography",))
]
"""Every algorithm, and for ML-DSA every backend: ``(algorithm, backend)``."""


def claims(settings: AuthSettings, clock: Clock) -> dict[str, Any]:
    now = int(clock.now().timestamp())
    return {
        "sub": "0190f0c2-7f9e-7c3b-9c51-5d0d1f1e2a3b",
        "email": "ada.lovelace@example.com",
        "role": "org_admin",
        "org_id": "default",
        "iss": settings.issuer,
        "aud": settings.audience,
        "iat": now,
        "exp": now + settings.access_token_ttl,
        "groups": ["grp-1", "grp-2"],
        "jti": secrets.token_hex(6),
    }


def per_call_ms(fn: Any, n: int) -> float:
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)


async def throughput(signer: JwtSigner, body: dict[str, Any], n: int, offload: bool) -> float:
    """Tokens per second for ``n`` concurrent sign calls."""
    t0 = time.perf_counter()
    if offload:
        await asyncio.gather(*(asyncio.to_thread(signer.sign_sync, body) for _ in range(n)))
    else:
        await asyncio.gather(*(signer.sign(body) for _ in range(n)))
    return n / (time.perf_counter() - t0)


def run_case(alg: str, backend: str, n: int) -> str:
    """One table row for ``alg`` on ``backend``."""
    with tempfile.TemporaryDirectory() as key_dir:
        settings = AuthSettings(algorithm=alg, mldsa_backend=backend, key_dir=key_dir)
        clock = SystemClock()
        signer = JwtSigner.from_settings(settings, clock)
        body = claims(settings, clock)
        token = signer.sign_sync(body)

        def verify() -> None:
            signer.verify_sync(token, issuer=settings.issuer, audience=settings.audience, leeway=0)

        sign_ms = per_call_ms(lambda: signer.sign_sync(body), n)
        verify_ms = per_call_ms(verify, n)
        # The primitive alone: the algorithm object's sign/verify over the same signing input.
        key = signer.verification_keys()[0]
        algorithm = signer._jws.get_algorithm_by_name(alg)
        signing_input, _, signature = token.rpartition(".")
        message, raw = signing_input.encode(), base64url_decode(signature)
        prim_sign_ms = per_call_ms(lambda: algorithm.sign(message, key.private), n)
        prim_verify_ms = per_call_ms(lambda: algorithm.verify(message, key.public, raw), n)
        loop_tps = asyncio.run(throughput(signer, body, n, offload=False))
        thread_tps = asyncio.run(throughput(signer, body, n, offload=True))
    overhead_us = (verify_ms - prim_verify_ms) * 1e3
    return (
        f"{alg:<10} {backend:<12} {sign_ms:>8.3f} {prim_sign_ms:>9.3f} {verify_ms:>9.3f} "
        f"{prim_verify_ms:>10.3f} {overhead_us:>9.0f} {len(token):>8} "
        f"{loop_tps:>10.0f} {thread_tps:>12.0f}"
    )


def main(argv: list[str] | None = None) -> None:
    """Parse ``argv`` (default: the command line), measure every case, print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=300, help="tokens per measurement")
    args = parser.parse_args(argv)
    print(f"cores: {os.cpu_count()}, tokens per figure: {args.n}")
    header = (
        f"{'algorithm':<10} {'backend':<12} {'sign ms':>8} {'prim sign':>9} {'verify ms':>9} "
        f"{'prim verify':>10} {'over µs':>9} {'token B':>8} {'loop tok/s':>10} {'thread tok/s':>12}"
    )
    print(header)
    print("-" * len(header))
    for alg, backend in CASES:
        if backend == "liboqs":
            try:
                mldsa_backend("liboqs")
            except SignerUnavailable:
                print(f"{alg:<10} {backend:<12} {'(liboqs not installed: skipped)':>51}")
                continue
        print(run_case(alg, backend, args.n))


if __name__ == "__main__":
    main()
