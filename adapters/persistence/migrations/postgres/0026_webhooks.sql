-- depends: 0024_outbox
-- Webhook endpoints and their delivery log (docs/reference/webhooks.md; ADR 0052).

-- An organization's endpoints: event_types is a JSON array of audit types; sealed_secret the
-- signing secret sealed with the service's key (AES-256-GCM, the id as associated data);
-- failing_since the first failed try since the last delivered one.
CREATE TABLE webhooks (
    id              TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    org_id          TEXT COLLATE "C" NOT NULL,
    url             TEXT        NOT NULL,
    event_types     JSONB       NOT NULL,
    description     TEXT        NOT NULL DEFAULT '',
    enabled         BOOLEAN     NOT NULL,
    sealed_secret   BYTEA       NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    failing_since   TIMESTAMPTZ,
    disabled_reason TEXT
);
CREATE INDEX webhooks_org_id_idx ON webhooks (org_id, id);

-- Each try of a message (message_id: the outbox item, the webhook-id header) to an endpoint.
CREATE TABLE webhook_deliveries (
    id           TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    webhook_id   TEXT COLLATE "C" NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    message_id   TEXT COLLATE "C" NOT NULL,
    event_type   TEXT        NOT NULL,
    attempt      INTEGER     NOT NULL CHECK (attempt >= 1),
    attempted_at TIMESTAMPTZ NOT NULL,
    status_code  INTEGER,
    error        TEXT
);
CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, id);
