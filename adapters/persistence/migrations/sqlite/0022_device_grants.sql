-- depends: 0018_federation_hardening
-- The device authorization grant (RFC 8628), pushed authorization requests (RFC 9126) and
-- private_key_jwt (RFC 7523); docs/reference/oauth-and-oidc.md. Times are INTEGER
-- microseconds since the Unix epoch, UTC; scopes and amr are space-separated.

-- Device grants, by the SHA-256 hex of the device code; found by the SHA-256 hex of the
-- normalized user code. Status: pending, approved, denied, used (the tokens issued, once).
CREATE TABLE oidc_device_grants (
    device_code_hash TEXT    NOT NULL PRIMARY KEY,
    user_code_hash   TEXT    NOT NULL UNIQUE,
    client_id        TEXT    NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    scopes           TEXT    NOT NULL,
    created_at       INTEGER NOT NULL,
    expires_at       INTEGER NOT NULL,
    poll_interval    INTEGER NOT NULL,
    last_polled_at   INTEGER,
    status           TEXT    NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'approved', 'denied', 'used')),
    user_id          TEXT REFERENCES users (id) ON DELETE CASCADE,
    session_id       TEXT,
    auth_time        INTEGER,
    amr              TEXT    NOT NULL DEFAULT '',
    acr              TEXT,
    decided_at       INTEGER
);
CREATE INDEX oidc_device_grants_expires_at_idx ON oidc_device_grants (expires_at);
CREATE INDEX oidc_device_grants_client_id_idx ON oidc_device_grants (client_id);
CREATE INDEX oidc_device_grants_user_id_idx ON oidc_device_grants (user_id)
    WHERE user_id IS NOT NULL;

-- Pushed authorization requests (RFC 9126) and private_key_jwt (RFC 7523): the client fields.
ALTER TABLE oauth_clients ADD COLUMN require_pushed_authorization_requests INTEGER NOT NULL
    DEFAULT 0 CHECK (require_pushed_authorization_requests IN (0, 1));
ALTER TABLE oauth_clients ADD COLUMN jwks TEXT;
ALTER TABLE oauth_clients ADD COLUMN jwks_uri TEXT;

-- Pushed authorization requests, by the SHA-256 hex of the request_uri: the checked parameters
-- (a JSON array of [name, value] pairs), single use (deleted when taken), about 60 s.
CREATE TABLE oidc_pushed_requests (
    uri_hash   TEXT    NOT NULL PRIMARY KEY,
    client_id  TEXT    NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    params     TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX oidc_pushed_requests_expires_at_idx ON oidc_pushed_requests (expires_at);
CREATE INDEX oidc_pushed_requests_client_id_idx ON oidc_pushed_requests (client_id);
