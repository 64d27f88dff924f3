-- Undo 0004_sessions (session records and the reuse-interval counts are lost).
DROP TRIGGER IF EXISTS refresh_tokens_touch_session ON refresh_tokens;
DROP FUNCTION IF EXISTS refresh_tokens_touch_session();
DROP TABLE IF EXISTS sessions;
ALTER TABLE rotated_refresh_tokens DROP COLUMN reuse_count, DROP COLUMN rotated_at;
ALTER TABLE users DROP COLUMN email_verified, DROP COLUMN disabled;
