"""What the ``authsvc`` command modules share (``entrypoints.cli``, ``cli_users``, ``cli_keys``,
``cli_clients``): the ``Command`` type, the error printed as one line (``CliError``), the
``positive_int`` argument type and the plain-text table (``print_table``)."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from entrypoints.container import Container

__all__ = ["CliError", "Command", "positive_int", "print_table"]

Command = Callable[["Container"], Awaitable[None]]
"""An operator command: run against an open container's storage."""


class CliError(Exception):
    """An error to print as one line on stderr, exit status 2 (no traceback)."""


def positive_int(text: str) -> int:
    """An argparse type: ``text`` as an integer of at least 1 (``ArgumentTypeError`` else)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def print_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Print ``header`` and ``rows`` as left-aligned columns two spaces apart."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
