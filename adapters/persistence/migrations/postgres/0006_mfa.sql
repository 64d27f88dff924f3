-- depends: 0005_email_tokens
-- Multi-factor authentication (docs/reference/mfa-and-passkeys.md; ADR 0018): TOTP secrets (AES-GCM sealed,
-- never in clear), recovery codes (SHA-256 hashes, single use) and the second steps of logins
-- (mfa_token hashes).
ALTER TABLE users ADD COLUMN mfa_enabled BOOLEAN NOT NULL DEFAULT FALSE;

-- One per user: pending (confirmed false) until a code confirms it. last_step: the newest
-- accepted RFC 6238 time step (a code is accepted once).
CREATE TABLE mfa_totp (
    user_id       TEXT COLLATE "C" NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    sealed_secret BYTEA       NOT NULL,
    confirmed     BOOLEAN     NOT NULL,
    last_step     BIGINT,
    created_at    TIMESTAMPTZ NOT NULL
);

CREATE TABLE mfa_recovery_codes (
    user_id   TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash TEXT NOT NULL,
    PRIMARY KEY (user_id, code_hash)
);

CREATE TABLE mfa_challenges (
    token_hash TEXT        NOT NULL PRIMARY KEY,
    user_id    TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at TIMESTAMPTZ NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    failures   INTEGER     NOT NULL DEFAULT 0
);
CREATE INDEX mfa_challenges_user_id_idx ON mfa_challenges (user_id);
CREATE INDEX mfa_challenges_expires_at_idx ON mfa_challenges (expires_at);
