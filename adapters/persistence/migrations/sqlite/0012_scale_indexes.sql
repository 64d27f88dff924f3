-- depends: 0009_passkeys
-- Indexes the statements need at a million users (issue 35): the audit log filtered by type,
-- alone or inside one organization, reads an index in id order; indexes no statement uses go
-- (rotated tokens are never looked up by family; the sessions purge's condition cannot use
-- sessions.expires_at). SQLite compares ids bytewise already: no collation to change.
DROP INDEX IF EXISTS rotated_refresh_tokens_family_id_idx;
DROP INDEX IF EXISTS sessions_expires_at_idx;
CREATE INDEX audit_events_type_idx ON audit_events (type, id);
CREATE INDEX audit_events_org_id_type_idx ON audit_events (org_id, type, id);
