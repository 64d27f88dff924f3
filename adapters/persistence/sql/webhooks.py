"""Statements on ``webhooks`` and ``webhook_deliveries`` (``WebhookRepo``,
docs/reference/webhooks.md); see the package for the placeholders."""

# ruff: noqa: S608 - column lists only; values are bound

from __future__ import annotations

COLUMNS = (
    "id, org_id, url, event_types, description, enabled, sealed_secret, created_at,"
    " updated_at, failing_since, disabled_reason"
)
"""The columns of ``webhooks`` in the order of ``Webhook``'s fields."""
DELIVERY_COLUMNS = (
    "id, webhook_id, message_id, event_type, attempt, attempted_at, status_code, error"
)
"""The columns of ``webhook_deliveries`` in the order of ``WebhookDelivery``'s fields."""

INSERT = (
    f"INSERT INTO webhooks ({COLUMNS}) VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8, $9, $10, $11)"
)
BY_ID = f"SELECT {COLUMNS} FROM webhooks WHERE id = $1"
PAGE = (
    f"SELECT {COLUMNS} FROM webhooks WHERE ($1::text IS NULL OR org_id = $1)"
    " AND ($2::text IS NULL OR id > $2) ORDER BY id LIMIT $3"
)
UPDATE = (
    "UPDATE webhooks SET url = $2, event_types = $3::jsonb, description = $4, enabled = $5,"
    " sealed_secret = $6, updated_at = $7, failing_since = $8, disabled_reason = $9"
    " WHERE id = $1"
)
DELETE_DELIVERIES = "DELETE FROM webhook_deliveries WHERE webhook_id = $1"
DELETE = "DELETE FROM webhooks WHERE id = $1"
ENABLED_FOR = (
    f"SELECT {COLUMNS} FROM webhooks WHERE enabled = $3 AND org_id ="
    " COALESCE($1::text, (SELECT org_id FROM users WHERE id = $2)) ORDER BY id"
)
"""The enabled (``$3``: true) endpoints of organization ``$1``, or of user ``$2``'s when
``$1`` is NULL."""
SET_FAILING = "UPDATE webhooks SET failing_since = $2 WHERE id = $1"
DISABLE = (
    "UPDATE webhooks SET enabled = $4, disabled_reason = $2, updated_at = $3"
    " WHERE id = $1 AND enabled = $5"
)
"""Disable endpoint ``$1`` (``$4`` false) if enabled (``$5`` true)."""
INSERT_DELIVERY = (
    f"INSERT INTO webhook_deliveries ({DELIVERY_COLUMNS})"
    " SELECT $1::text, $2::text, $3::text, $4::text, $5::integer, $6::timestamptz, $7::integer,"
    " $8::text WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = $2)"
)
DELIVERIES = (
    f"SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = $1"
    " AND ($2::text IS NULL OR id < $2) ORDER BY id DESC LIMIT $3"
)
ATTEMPTED_BEFORE = "attempted_at < $1"
"""The purge condition of ``webhook_deliveries``: attempted before ``$1`` (index
``webhook_deliveries_attempted_idx``, migration 0028)."""
