-- depends: 0024_outbox
-- Webhook endpoints and their delivery log (docs/reference/webhooks.md; ADR 0052). Times are
-- INTEGER microseconds since the Unix epoch, UTC.

-- An organization's endpoints: event_types is a JSON array of audit types; sealed_secret the
-- signing secret sealed with the service's key (AES-256-GCM, the id as associated data);
-- failing_since the first failed try since the last delivered one.
CREATE TABLE webhooks (
    id              TEXT    NOT NULL PRIMARY KEY,
    org_id          TEXT    NOT NULL,
    url             TEXT    NOT NULL,
    event_types     TEXT    NOT NULL,
    description     TEXT    NOT NULL DEFAULT '',
    enabled         INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    sealed_secret   BLOB    NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    failing_since   INTEGER,
    disabled_reason TEXT
);
CREATE INDEX webhooks_org_id_idx ON webhooks (org_id, id);

-- Each try of a message (message_id: the outbox item, the webhook-id header) to an endpoint.
CREATE TABLE webhook_deliveries (
    id           TEXT    NOT NULL PRIMARY KEY,
    webhook_id   TEXT    NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    message_id   TEXT    NOT NULL,
    event_type   TEXT    NOT NULL,
    attempt      INTEGER NOT NULL CHECK (attempt >= 1),
    attempted_at INTEGER NOT NULL,
    status_code  INTEGER,
    error        TEXT
);
CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, id);
