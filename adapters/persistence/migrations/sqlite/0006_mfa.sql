-- depends: 0005_email_tokens
-- Multi-factor authentication (docs/reference/mfa-and-passkeys.md; ADR 0018): TOTP secrets (AES-GCM sealed,
-- never in clear), recovery codes (SHA-256 hashes, single use) and the second steps of logins
-- (mfa_token hashes). Times are INTEGER microseconds since the Unix epoch, UTC.

-- 0 or 1. (No CHECK on an added column: SQLite verifies it with a query whose rows the
-- migration tool would print.)
ALTER TABLE users ADD COLUMN mfa_enabled INTEGER NOT NULL DEFAULT 0;

-- One per user: pending (confirmed = 0) until a code confirms it. last_step: the newest
-- accepted RFC 6238 time step (a code is accepted once).
CREATE TABLE mfa_totp (
    user_id       TEXT    NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    sealed_secret BLOB    NOT NULL,
    confirmed     INTEGER NOT NULL CHECK (confirmed IN (0, 1)),
    last_step     INTEGER,
    created_at    INTEGER NOT NULL
);

CREATE TABLE mfa_recovery_codes (
    user_id   TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash TEXT NOT NULL,
    PRIMARY KEY (user_id, code_hash)
);

CREATE TABLE mfa_challenges (
    token_hash TEXT    NOT NULL PRIMARY KEY,
    user_id    TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    failures   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX mfa_challenges_user_id_idx ON mfa_challenges (user_id);
CREATE INDEX mfa_challenges_expires_at_idx ON mfa_challenges (expires_at);
