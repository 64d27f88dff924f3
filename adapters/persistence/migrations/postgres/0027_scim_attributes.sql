-- depends: 0026_webhooks
-- What a SCIM client sent of a user or group that the account itself does not hold
-- (docs/reference/scim.md, ADR 0054): the client's externalId, and for a user the kept
-- attributes of the SCIM User (name, displayName, emails, active as sent) as a JSON object.
-- A row goes with its user or group.
CREATE TABLE scim_users (
    user_id     TEXT COLLATE "C" NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    external_id TEXT,
    attributes  JSONB NOT NULL
);

CREATE TABLE scim_groups (
    group_id    TEXT COLLATE "C" NOT NULL PRIMARY KEY REFERENCES groups (id) ON DELETE CASCADE,
    external_id TEXT
);
