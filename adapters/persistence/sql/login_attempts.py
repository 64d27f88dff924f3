"""Statements on ``login_failures`` (``LoginAttempts``); see the package for the placeholders."""

from __future__ import annotations

SINCE = "SELECT at FROM login_failures WHERE key = $1 AND at >= $2 ORDER BY at, id"
INSERT = "INSERT INTO login_failures (key, at) VALUES ($1, $2)"
CLAIM = INSERT + " RETURNING id"
FORGET_BEFORE = "DELETE FROM login_failures WHERE at < $1"
RELEASE = "DELETE FROM login_failures WHERE key = $1 AND id = $2"
RESET = "DELETE FROM login_failures WHERE key = $1"
