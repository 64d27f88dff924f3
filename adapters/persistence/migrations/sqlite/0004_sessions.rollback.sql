-- Undo 0004_sessions (session records and the reuse-interval counts are lost).
DROP TRIGGER IF EXISTS refresh_tokens_touch_session;
DROP TABLE IF EXISTS sessions;
ALTER TABLE rotated_refresh_tokens DROP COLUMN reuse_count;
ALTER TABLE rotated_refresh_tokens DROP COLUMN rotated_at;
ALTER TABLE users DROP COLUMN email_verified;
ALTER TABLE users DROP COLUMN disabled;
