-- depends: 0018_federation_hardening
-- Changing the email from the account page (docs/reference/accounts.md; ADR 0043): a token of
-- the new purpose 'email_change', mailed to the new address, carries that address until the
-- link confirms it. SQLite cannot change a CHECK constraint: the table is rebuilt.
CREATE TABLE email_tokens_0019 (
    token_hash TEXT    NOT NULL PRIMARY KEY,
    user_id    TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    purpose    TEXT    NOT NULL CHECK (purpose IN ('reset', 'verify', 'email_change')),
    expires_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    new_email  TEXT,
    CHECK ((purpose = 'email_change') = (new_email IS NOT NULL))
);
INSERT INTO email_tokens_0019 (token_hash, user_id, purpose, expires_at, created_at)
    SELECT token_hash, user_id, purpose, expires_at, created_at FROM email_tokens;
DROP TABLE email_tokens;
ALTER TABLE email_tokens_0019 RENAME TO email_tokens;
CREATE INDEX email_tokens_user_id_purpose_idx ON email_tokens (user_id, purpose);
CREATE INDEX email_tokens_expires_at_idx ON email_tokens (expires_at);
