-- depends: 0003_signing_keys
-- Sessions (docs/reference/tokens-and-sessions.md), the user lifecycle (section 8) and the refresh-token reuse
-- interval (section 2; ADR 0016).

ALTER TABLE users ADD COLUMN disabled BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE users ADD COLUMN email_verified BOOLEAN NOT NULL DEFAULT FALSE;

-- One row per refresh-token family: the login's user agent and client address.
CREATE TABLE sessions (
    id             TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    user_id        TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at     TIMESTAMPTZ NOT NULL,
    last_used_at   TIMESTAMPTZ NOT NULL,
    expires_at     TIMESTAMPTZ NOT NULL,
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
CREATE FUNCTION refresh_tokens_touch_session() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE sessions SET last_used_at = NEW.created_at WHERE id = NEW.family_id;
    RETURN NULL;
END;
$$;
CREATE TRIGGER refresh_tokens_touch_session AFTER INSERT ON refresh_tokens
    FOR EACH ROW EXECUTE FUNCTION refresh_tokens_touch_session();

-- The reuse interval: when a token was rotated and how often it was presented again since.
ALTER TABLE rotated_refresh_tokens
    ADD COLUMN rotated_at TIMESTAMPTZ NOT NULL DEFAULT '-infinity',
    ADD COLUMN reuse_count INTEGER NOT NULL DEFAULT 0;
