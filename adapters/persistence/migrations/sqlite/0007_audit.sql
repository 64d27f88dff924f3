-- depends: 0006_mfa
-- The audit log (docs/reference/operations.md; ADR 0019): one row per security event, written in the
-- transaction of the change it records. No foreign keys: a row outlives its user and group.
-- id: time-ordered (the first 14 hex digits are the microseconds), so ORDER BY id DESC is
-- newest first. Times are INTEGER microseconds since the Unix epoch, UTC; details is a JSON
-- object of ids and reasons.
CREATE TABLE audit_events (
    id             TEXT    NOT NULL PRIMARY KEY,
    type           TEXT    NOT NULL,
    occurred_at    INTEGER NOT NULL,
    actor_id       TEXT,
    user_id        TEXT,
    org_id         TEXT,
    client_address TEXT,
    user_agent     TEXT,
    details        TEXT    NOT NULL
);
CREATE INDEX audit_events_org_id_idx ON audit_events (org_id, id);
CREATE INDEX audit_events_user_id_idx ON audit_events (user_id, id);
CREATE INDEX audit_events_occurred_at_idx ON audit_events (occurred_at);
