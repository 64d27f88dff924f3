"""``make bench``: every benchmark once, with modest defaults (about half a minute in all).

Prints the signing table (``bench.bench_signers``) and one HTTP row (``bench.http_load``: a
server on SQLite with the default algorithm). For other figures run a module itself, e.g.
``.venv/bin/python -m bench.http_load --algorithm ML-DSA-65 --backend postgres --dsn DSN``.

    .venv/bin/python -m bench.run [--n 100] [--seconds 3] [--concurrency 16]
"""

from __future__ import annotations

import argparse

from bench import bench_signers, http_load


def main(argv: list[str] | None = None) -> None:
    """Run the signing benchmark, then the HTTP one, each with the given sizes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100, help="tokens per signing figure")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per HTTP figure")
    parser.add_argument("--concurrency", type=int, default=16, help="concurrent HTTP clients")
    args = parser.parse_args(argv)
    print("## Access tokens per algorithm\n")
    bench_signers.main(["--n", str(args.n)])
    print("\n## HTTP, one worker\n")
    http_load.main(["--seconds", str(args.seconds), "--concurrency", str(args.concurrency)])


if __name__ == "__main__":
    main()
