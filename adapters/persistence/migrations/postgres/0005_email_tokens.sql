-- depends: 0004_sessions
-- Tokens sent by email (docs/reference/accounts.md): password-reset and email-verification links,
-- stored only as SHA-256 hashes; single use.
CREATE TABLE email_tokens (
    token_hash TEXT        NOT NULL PRIMARY KEY,
    user_id    TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    purpose    TEXT        NOT NULL CHECK (purpose IN ('reset', 'verify')),
    expires_at TIMESTAMPTZ NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX email_tokens_user_id_purpose_idx ON email_tokens (user_id, purpose);
CREATE INDEX email_tokens_expires_at_idx ON email_tokens (expires_at);
