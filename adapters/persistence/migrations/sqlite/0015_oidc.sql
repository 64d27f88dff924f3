-- depends: 0013_client_signing_alg
-- The OpenID Connect provider (issue 31, docs/reference/oauth-and-oidc.md). Times are INTEGER microseconds
-- since the Unix epoch, UTC; scopes and amr are space-separated; URI lists are JSON arrays.

-- The code flow's client fields; the defaults keep every existing client a client-credentials
-- client with a secret.
ALTER TABLE oauth_clients ADD COLUMN grant_types TEXT NOT NULL DEFAULT '["client_credentials"]';
ALTER TABLE oauth_clients ADD COLUMN redirect_uris TEXT NOT NULL DEFAULT '[]';
ALTER TABLE oauth_clients ADD COLUMN post_logout_redirect_uris TEXT NOT NULL DEFAULT '[]';
ALTER TABLE oauth_clients ADD COLUMN public INTEGER NOT NULL DEFAULT 0 CHECK (public IN (0, 1));
ALTER TABLE oauth_clients ADD COLUMN token_endpoint_auth_method TEXT NOT NULL
    DEFAULT 'client_secret_basic';
ALTER TABLE oauth_clients ADD COLUMN skip_consent INTEGER NOT NULL DEFAULT 0
    CHECK (skip_consent IN (0, 1));
ALTER TABLE oauth_clients ADD COLUMN logo_uri TEXT;
ALTER TABLE oauth_clients ADD COLUMN policy_uri TEXT;
ALTER TABLE oauth_clients ADD COLUMN tos_uri TEXT;
ALTER TABLE oauth_clients ADD COLUMN id_token_signed_response_alg TEXT;

-- The client whose code exchange started the session (NULL: a session of the JSON API).
ALTER TABLE sessions ADD COLUMN client_id TEXT;
CREATE INDEX sessions_client_id_idx ON sessions (client_id, user_id) WHERE client_id IS NOT NULL;

-- Authorization codes, by the SHA-256 hex of the code: single use (used_at), about 60 s.
CREATE TABLE oidc_codes (
    code_hash      TEXT    NOT NULL PRIMARY KEY,
    client_id      TEXT    NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    user_id        TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    redirect_uri   TEXT    NOT NULL,
    code_challenge TEXT    NOT NULL,
    nonce          TEXT,
    scopes         TEXT    NOT NULL,
    session_id     TEXT    NOT NULL,
    auth_time      INTEGER NOT NULL,
    amr            TEXT    NOT NULL,
    acr            TEXT    NOT NULL,
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    used_at        INTEGER,
    family_id      TEXT
);
CREATE INDEX oidc_codes_expires_at_idx ON oidc_codes (expires_at);
CREATE INDEX oidc_codes_user_id_idx ON oidc_codes (user_id);
CREATE INDEX oidc_codes_client_id_idx ON oidc_codes (client_id);

-- Consents: the scopes a user allowed a client (the union of every grant).
CREATE TABLE oidc_consents (
    user_id    TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id  TEXT    NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    scopes     TEXT    NOT NULL,
    granted_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, client_id)
);
CREATE INDEX oidc_consents_client_id_idx ON oidc_consents (client_id);

-- Hosted sessions (the provider's login cookie, by the SHA-256 hex of its value): each rides
-- on a sessions row and ends with it.
CREATE TABLE oidc_hosted_sessions (
    id_hash         TEXT    NOT NULL PRIMARY KEY,
    session_id      TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    user_id         TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    auth_time       INTEGER NOT NULL,
    amr             TEXT    NOT NULL,
    acr             TEXT    NOT NULL,
    idle_expires_at INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL
);
CREATE INDEX oidc_hosted_sessions_session_id_idx ON oidc_hosted_sessions (session_id);
CREATE INDEX oidc_hosted_sessions_user_id_idx ON oidc_hosted_sessions (user_id);
CREATE INDEX oidc_hosted_sessions_idle_expires_at_idx ON oidc_hosted_sessions (idle_expires_at);
