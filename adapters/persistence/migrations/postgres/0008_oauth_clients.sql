-- depends: 0007_audit
-- OAuth clients (docs/reference/oauth-and-oidc.md; ADR 0020): secrets stored only as SHA-256 hashes (the
-- previous one kept for its grace after a rotation), scopes space-separated, audience a JSON
-- array.
CREATE TABLE oauth_clients (
    id                         TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    name                       TEXT        NOT NULL,
    org_id                     TEXT COLLATE "C" NOT NULL,
    scopes                     TEXT        NOT NULL,
    audience                   TEXT        NOT NULL,
    require_dpop               BOOLEAN     NOT NULL,
    disabled                   BOOLEAN     NOT NULL,
    created_at                 TIMESTAMPTZ NOT NULL,
    secret_hash                TEXT        NOT NULL,
    secret_rotated_at          TIMESTAMPTZ,
    previous_secret_hash       TEXT,
    previous_secret_expires_at TIMESTAMPTZ
);
CREATE INDEX oauth_clients_org_id_idx ON oauth_clients (org_id, id);

-- Access tokens of clients revoked before their exp (RFC 7009): kept until then.
CREATE TABLE revoked_access_tokens (
    jti        TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    client_id  TEXT COLLATE "C" NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX revoked_access_tokens_expires_at_idx ON revoked_access_tokens (expires_at);

-- DPoP proof ids seen within their window (RFC 9449 §11.1): a replay is refused by every
-- instance on this database.
CREATE TABLE dpop_proofs (
    jti        TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX dpop_proofs_expires_at_idx ON dpop_proofs (expires_at);
