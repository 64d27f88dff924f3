"""``authsvc keys list | rotate [--now] [--alg ALG] | retire KID`` (docs/reference/operations.md;
ADR 0015): the signing keys in the configured key store (``auth.key_store``). A rotation or a
retirement is announced to the running instances (``SigningKeysChanged``) when
``events.backend`` is a broker; else they find it at their next poll
(``auth.key_poll_interval``)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from application.events.catalog import SigningKeysChanged
from application.shared.settings import ALGORITHMS
from entrypoints.cli_common import Command, print_table

if TYPE_CHECKING:
    from entrypoints.container import Container

__all__ = ["ANNOUNCE_WAIT", "add_key_commands", "key_command"]

ANNOUNCE_WAIT = 5.0
"""Seconds ``keys rotate|retire`` waits for the broker before giving up announcing."""


def add_key_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``keys`` and its sub-commands on the top-level parser's ``sub``."""
    keys = sub.add_parser("keys", help="list, rotate or retire the signing keys")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    keys_sub.add_parser("list", help="one line per key: kid, alg, state and its times")
    rotate = keys_sub.add_parser(
        "rotate",
        help="add a key that signs auth.key_publish_ahead seconds from now",
        description="Add a key of auth.algorithm (or --alg, one of auth.algorithms). It is "
        "published in the JWKS at once and "
        "signs from auth.key_publish_ahead seconds later; the signing key stops then and keeps "
        "verifying until its last token has expired. Nobody is logged out.",
    )
    rotate.add_argument(
        "--now", action="store_true", help="sign with the new key at once (a key that leaked)"
    )
    rotate.add_argument(
        "--alg",
        choices=ALGORITHMS,
        default=None,
        help="the algorithm whose key rotates (one of auth.algorithms; default auth.algorithm)",
    )
    retire = keys_sub.add_parser(
        "retire",
        help="withdraw a key that no longer signs: its tokens are refused at once",
    )
    retire.add_argument("kid", metavar="KID")


def key_command(args: argparse.Namespace) -> Command:
    """The coroutine function running the ``keys`` command of ``args``."""
    if args.keys_command == "list":
        return _keys_list
    if args.keys_command == "rotate":
        return lambda c: _keys_rotate(c, args.now, args.alg)
    return lambda c: _keys_retire(c, args.kid)


def _when(t: datetime | None) -> str:
    return "-" if t is None else t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def _keys_list(container: Container) -> None:
    """``keys list``: every key of the store, latest first, with its state now, each judged by
    its own algorithm (docs/reference/tokens-and-sessions.md): ``signing`` (one per algorithm of
    ``auth.algorithms``), ``pending`` (published ahead), ``verifying`` (retiring: its tokens may
    be live; all keys of an algorithm dropped from the list) or ``expired``."""
    signer = await asyncio.to_thread(container.signer)
    records = await signer.key_records()
    now = container.clock().now()
    signing = signer.signing_kids()
    rows = [
        (r.kid, r.alg, r.state(r.alg, now, signing.get(r.alg)), _when(r.activates_at),
         _when(r.retired_at), _when(r.verify_until))
        for r in sorted(records, key=lambda r: (r.alg, r.activates_at, r.kid), reverse=True)
    ]  # fmt: skip
    print_table(("kid", "alg", "state", "signs_from", "signs_until", "verifies_until"), rows)


async def _announce(container: Container, event: SigningKeysChanged) -> None:
    """Tell the running instances (a broker bus); else say when they will notice."""
    bus = container.bus()
    start = getattr(bus, "start", None)
    poll = container.config().auth.key_poll_interval
    if start is None:
        print(f"(running instances pick it up within auth.key_poll_interval = {poll} s)")
        return
    await start()
    try:
        if await bus.wait_connected(ANNOUNCE_WAIT):
            await bus.publish(event)
            print("announced to the running instances")
        else:
            print(
                f"authsvc: the event broker is unreachable; running instances pick the change"
                f" up within auth.key_poll_interval = {poll} s",
                file=sys.stderr,
            )
    finally:
        await bus.close()


async def _keys_rotate(container: Container, now: bool, alg: str | None = None) -> None:
    """``keys rotate [--now] [--alg ALG]``: a new key of ``alg`` (default ``auth.algorithm``);
    the old one verifies until its tokens expired."""
    signer = await asyncio.to_thread(container.signer)
    record = await signer.rotate_keys(now=now, alg=alg)
    print(
        f"new {record.alg} key {record.kid}: in the JWKS now, signs from "
        f"{_when(record.activates_at)}"
    )
    await _announce(container, SigningKeysChanged(kids=(record.kid,), reason="rotated"))


async def _keys_retire(container: Container, kid: str) -> None:
    """``keys retire KID``: out of the JWKS and verification at once."""
    signer = await asyncio.to_thread(container.signer)
    await signer.retire_key(kid)
    print(f"key {kid} retired: no longer in the JWKS; its tokens are refused")
    await _announce(container, SigningKeysChanged(kids=(kid,), reason="retired"))
