-- depends: 0009_passkeys
-- Indexes the statements need at a million users (issue 35; ADR 0023-scale):
-- * refresh_tokens.family_id takes COLLATE "C", the collation of sessions.id it is compared
--   with, so its index serves `family_id = sessions.id` (the live-session test of every sessions
--   listing and of the purge); a collation change of a text column rewrites no rows, only the
--   index is rebuilt.
-- * the audit log filtered by type, alone or inside one organization, reads an index in id order.
-- * indexes no statement uses go: rotated tokens are never looked up by family, and the
--   sessions purge's condition (`NOT (expires_at > now AND EXISTS ...)`) cannot use an index on
--   sessions.expires_at.
DROP INDEX IF EXISTS refresh_tokens_family_id_idx;
ALTER TABLE refresh_tokens ALTER COLUMN family_id TYPE TEXT COLLATE "C";
CREATE INDEX refresh_tokens_family_id_idx ON refresh_tokens (family_id);
ALTER TABLE rotated_refresh_tokens ALTER COLUMN family_id TYPE TEXT COLLATE "C";
DROP INDEX IF EXISTS rotated_refresh_tokens_family_id_idx;
DROP INDEX IF EXISTS sessions_expires_at_idx;
CREATE INDEX audit_events_type_idx ON audit_events (type, id);
CREATE INDEX audit_events_org_id_type_idx ON audit_events (org_id, type, id);
