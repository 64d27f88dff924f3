-- depends: 0015_oidc
-- Login with other identity providers (issue 33, docs/reference/federation.md). Times are INTEGER
-- microseconds since the Unix epoch, UTC.

-- An identity is (issuer, subject), never the email; at most one per user and provider.
CREATE TABLE federated_identities (
    issuer       TEXT NOT NULL,
    subject      TEXT NOT NULL,
    provider     TEXT NOT NULL,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    email        TEXT,
    linked_at    INTEGER NOT NULL,
    last_used_at INTEGER,
    PRIMARY KEY (issuer, subject)
);
CREATE UNIQUE INDEX federated_identities_user_provider_idx
    ON federated_identities (user_id, provider);

-- Started logins at a provider, by the SHA-256 hex of their state: single use, <= 10 min.
CREATE TABLE federation_flows (
    state_hash    TEXT NOT NULL PRIMARY KEY,
    provider      TEXT NOT NULL,
    browser_hash  TEXT NOT NULL,
    nonce         TEXT NOT NULL,
    code_verifier TEXT NOT NULL,
    return_to     TEXT NOT NULL,
    link_user_id  TEXT REFERENCES users (id) ON DELETE CASCADE,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL
);
CREATE INDEX federation_flows_expires_at_idx ON federation_flows (expires_at);
CREATE INDEX federation_flows_link_user_id_idx ON federation_flows (link_user_id);
