-- Undo 0019_email_change (pending email changes are dropped: their links stop working).
CREATE TABLE email_tokens_0005 (
    token_hash TEXT    NOT NULL PRIMARY KEY,
    user_id    TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    purpose    TEXT    NOT NULL CHECK (purpose IN ('reset', 'verify')),
    expires_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);
INSERT INTO email_tokens_0005 (token_hash, user_id, purpose, expires_at, created_at)
    SELECT token_hash, user_id, purpose, expires_at, created_at FROM email_tokens
    WHERE purpose <> 'email_change';
DROP TABLE email_tokens;
ALTER TABLE email_tokens_0005 RENAME TO email_tokens;
CREATE INDEX email_tokens_user_id_purpose_idx ON email_tokens (user_id, purpose);
CREATE INDEX email_tokens_expires_at_idx ON email_tokens (expires_at);
