-- depends: 0008_oauth_clients
-- Passkeys (docs/reference/mfa-and-passkeys.md): credentials (the COSE public key and the signature counter
-- stay here), one opaque WebAuthn user handle per user, and the ceremonies in progress.
-- Times are INTEGER microseconds since the Unix epoch, UTC; transports space-separated.
CREATE TABLE passkeys (
    id              TEXT    NOT NULL PRIMARY KEY,
    user_id         TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    credential_id   BLOB    NOT NULL UNIQUE,
    public_key      BLOB    NOT NULL,
    sign_count      INTEGER NOT NULL,
    aaguid          TEXT    NOT NULL,
    backup_eligible INTEGER NOT NULL CHECK (backup_eligible IN (0, 1)),
    backed_up       INTEGER NOT NULL CHECK (backed_up IN (0, 1)),
    transports      TEXT    NOT NULL,
    name            TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    last_used_at    INTEGER,
    suspected_clone INTEGER NOT NULL CHECK (suspected_clone IN (0, 1))
);
CREATE INDEX passkeys_user_id_idx ON passkeys (user_id, created_at);

CREATE TABLE webauthn_user_handles (
    user_id TEXT NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    handle  BLOB NOT NULL UNIQUE
);

CREATE TABLE webauthn_ceremonies (
    id             TEXT    NOT NULL PRIMARY KEY,
    kind           TEXT    NOT NULL,
    challenge      BLOB    NOT NULL,
    user_id        TEXT,
    mfa_token_hash TEXT,
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL
);
CREATE INDEX webauthn_ceremonies_expires_at_idx ON webauthn_ceremonies (expires_at);
