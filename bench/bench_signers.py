"""Speed and size of access tokens per signing algorithm and ML-DSA backend.

Run: ``.venv/bin/python -m bench.bench_signers [--n 300]``. Prints, per algorithm/backend:
median sign and verify time per token (ms, one thread, keys already loaded), token size
(bytes), and throughput of concurrent ``sign`` calls on the event loop versus handed to worker
threads (``asyncio.to_thread``), to decide whether offloading signing pays.
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

from adapters.crypto.jwt_signer import JwtSigner, SignerUnavailable, mldsa_backend
from application.settings import AuthSettings
from tests.fakes import FakeClock

CASES = [
    ("RS256", "cryptography"),
    ("ML-DSA-65", "cryptography"),
    ("ML-DSA-65", "liboqs"),
    ("ML-DSA-87", "cryptography"),
    ("ML-DSA-87", "liboqs"),
]


def claims(settings: AuthSettings, clock: FakeClock) -> dict[str, Any]:
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
        clock = FakeClock()
        signer = JwtSigner.from_settings(settings, clock)
        body = claims(settings, clock)
        token = signer.sign_sync(body)

        def verify() -> None:
            signer.verify_sync(token, issuer=settings.issuer, audience=settings.audience, leeway=0)

        sign_ms = per_call_ms(lambda: signer.sign_sync(body), n)
        verify_ms = per_call_ms(verify, n)
        loop_tps = asyncio.run(throughput(signer, body, n, offload=False))
        thread_tps = asyncio.run(throughput(signer, body, n, offload=True))
    return (
        f"{alg:<10} {backend:<12} {sign_ms:>8.3f} {verify_ms:>9.3f} {len(token):>8} "
        f"{loop_tps:>10.0f} {thread_tps:>12.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=300, help="tokens per measurement")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}, tokens per figure: {args.n}")
    header = (
        f"{'algorithm':<10} {'backend':<12} {'sign ms':>8} {'verify ms':>9} {'token B':>8} "
        f"{'loop tok/s':>10} {'thread tok/s':>12}"
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
