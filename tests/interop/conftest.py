"""The interop harness's fixtures, ``node_modules`` and ``chromium`` (``tests.interop.fixtures``)."""

from __future__ import annotations

from tests.interop.fixtures import chromium, node_modules  # noqa: F401 - fixtures
