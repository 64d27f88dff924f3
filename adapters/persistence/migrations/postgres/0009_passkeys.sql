-- depends: 0008_oauth_clients
-- Passkeys (docs/reference/mfa-and-passkeys.md): credentials (the COSE public key and the signature counter
-- stay here), one opaque WebAuthn user handle per user, and the ceremonies in progress.
-- transports space-separated.
CREATE TABLE passkeys (
    id              TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    user_id         TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    credential_id   BYTEA       NOT NULL UNIQUE,
    public_key      BYTEA       NOT NULL,
    sign_count      BIGINT      NOT NULL,
    aaguid          TEXT        NOT NULL,
    backup_eligible BOOLEAN     NOT NULL,
    backed_up       BOOLEAN     NOT NULL,
    transports      TEXT        NOT NULL,
    name            TEXT        NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    last_used_at    TIMESTAMPTZ,
    suspected_clone BOOLEAN     NOT NULL
);
CREATE INDEX passkeys_user_id_idx ON passkeys (user_id, created_at);

CREATE TABLE webauthn_user_handles (
    user_id TEXT COLLATE "C" NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    handle  BYTEA NOT NULL UNIQUE
);

CREATE TABLE webauthn_ceremonies (
    id             TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    kind           TEXT        NOT NULL,
    challenge      BYTEA       NOT NULL,
    user_id        TEXT COLLATE "C",
    mfa_token_hash TEXT,
    created_at     TIMESTAMPTZ NOT NULL,
    expires_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX webauthn_ceremonies_expires_at_idx ON webauthn_ceremonies (expires_at);
