-- depends: 0003_signing_keys
-- Sessions (docs/reference/tokens-and-sessions.md), the user lifecycle (section 8) and the refresh-token reuse
-- interval (section 2; ADR 0016). Times are INTEGER microseconds since the Unix epoch, UTC.

-- Booleans are 0 or 1. (No CHECK on an added column: SQLite verifies it with a query whose
-- rows the migration tool would print.)
ALTER TABLE users ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 0;

-- One row per refresh-token family: the login's user agent and client address.
CREATE TABLE sessions (
    id             TEXT    NOT NULL PRIMARY KEY,
    user_id        TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at     INTEGER NOT NULL,
    last_used_at   INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    user_agent     TEXT,
    client_address TEXT
);
CREATE INDEX sessions_user_id_created_at_idx ON sessions (user_id, created_at);
CREATE INDEX sessions_expires_at_idx ON sessions (expires_at);

-- The families live before this migration become sessions (no user agent or address known).
INSERT INTO sessions (id, user_id, created_at, last_used_at, expires_at)
SELECT family_id, min(user_id), min(created_at), max(created_at), max(session_expires_at)
FROM refresh_tokens GROUP BY family_id;

-- last_used_at follows each token stored for the family: a rotation's INSERT updates it in the
-- same statement, with no round trip of its own.
CREATE TRIGGER refresh_tokens_touch_session AFTER INSERT ON refresh_tokens
BEGIN
    UPDATE sessions SET last_used_at = NEW.created_at WHERE id = NEW.family_id;
END;

-- The reuse interval: when a token was rotated and how often it was presented again since.
ALTER TABLE rotated_refresh_tokens ADD COLUMN rotated_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rotated_refresh_tokens ADD COLUMN reuse_count INTEGER NOT NULL DEFAULT 0;
