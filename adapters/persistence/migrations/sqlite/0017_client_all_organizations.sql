-- depends: 0016_federated_identities
-- A code-flow client signs in only users of its own organization unless a superadmin (or the
-- command line) sets all_organizations (docs/reference/oauth-and-oidc.md). Existing clients keep to theirs.
ALTER TABLE oauth_clients ADD COLUMN all_organizations INTEGER NOT NULL DEFAULT 0
    CHECK (all_organizations IN (0, 1));
