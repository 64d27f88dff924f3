-- depends: 0018_federation_hardening
-- Invitations (docs/reference/invitations.md). Times are INTEGER microseconds since the Unix
-- epoch, UTC.

-- An invitation of an email into an organization with a role and groups (a JSON array of
-- group ids). token_hash is the SHA-256 hex of the emailed link's token, never the token; the
-- state changes are conditional updates on state = 'pending'.
CREATE TABLE invitations (
    id               TEXT    NOT NULL PRIMARY KEY,
    org_id           TEXT    NOT NULL,
    email            TEXT    NOT NULL,
    role             TEXT    NOT NULL,
    group_ids        TEXT    NOT NULL,
    invited_by       TEXT    NOT NULL,
    created_at       INTEGER NOT NULL,
    expires_at       INTEGER NOT NULL,
    token_hash       TEXT    NOT NULL UNIQUE,
    state            TEXT    NOT NULL CHECK (state IN ('pending', 'accepted', 'revoked')),
    accepted_user_id TEXT
);
CREATE INDEX invitations_org_id_idx ON invitations (org_id, id);
CREATE INDEX invitations_org_email_idx ON invitations (org_id, email);

-- A login at another provider started from an invitation's page: the new account is the
-- invitation's (SHA-256 hex of its link's token; NULL for any other login).
ALTER TABLE federation_flows ADD COLUMN invitation_hash TEXT;
