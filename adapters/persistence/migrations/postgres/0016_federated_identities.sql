-- depends: 0015_oidc
-- Login with other identity providers (issue 33, docs/reference/federation.md).

-- An identity is (issuer, subject), never the email; at most one per user and provider.
CREATE TABLE federated_identities (
    issuer       TEXT COLLATE "C" NOT NULL,
    subject      TEXT COLLATE "C" NOT NULL,
    provider     TEXT COLLATE "C" NOT NULL,
    user_id      TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    email        TEXT,
    linked_at    TIMESTAMPTZ NOT NULL,
    last_used_at TIMESTAMPTZ,
    PRIMARY KEY (issuer, subject)
);
CREATE UNIQUE INDEX federated_identities_user_provider_idx
    ON federated_identities (user_id, provider);

-- Started logins at a provider, by the SHA-256 hex of their state: single use, <= 10 min.
CREATE TABLE federation_flows (
    state_hash    TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    provider      TEXT COLLATE "C" NOT NULL,
    browser_hash  TEXT COLLATE "C" NOT NULL,
    nonce         TEXT NOT NULL,
    code_verifier TEXT NOT NULL,
    return_to     TEXT NOT NULL,
    link_user_id  TEXT COLLATE "C" REFERENCES users (id) ON DELETE CASCADE,
    created_at    TIMESTAMPTZ NOT NULL,
    expires_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX federation_flows_expires_at_idx ON federation_flows (expires_at);
CREATE INDEX federation_flows_link_user_id_idx ON federation_flows (link_user_id);
