"""Fixtures of the accounts use-case tests: a fresh ``World`` per test."""

from __future__ import annotations

import pytest

from tests.unit.application.accounts.world import World


@pytest.fixture
def world() -> World:
    return World()
