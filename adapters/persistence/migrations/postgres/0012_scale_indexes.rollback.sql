-- Undo 0012_scale_indexes.
DROP INDEX IF EXISTS audit_events_org_id_type_idx;
DROP INDEX IF EXISTS audit_events_type_idx;
CREATE INDEX IF NOT EXISTS sessions_expires_at_idx ON sessions (expires_at);
CREATE INDEX IF NOT EXISTS rotated_refresh_tokens_family_id_idx ON rotated_refresh_tokens (family_id);
ALTER TABLE rotated_refresh_tokens ALTER COLUMN family_id TYPE TEXT COLLATE "default";
ALTER TABLE refresh_tokens ALTER COLUMN family_id TYPE TEXT COLLATE "default";
