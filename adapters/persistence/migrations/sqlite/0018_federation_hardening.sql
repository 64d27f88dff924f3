-- depends: 0017_client_all_organizations
-- Federation hardening (security review s5, docs/reference/federation.md). Times are INTEGER
-- microseconds since the Unix epoch, UTC; booleans are 0 or 1.

-- Whether the local email was verified when the identity was linked: identities linked while
-- it was not are removed when the owner first proves the email (pre-hijacked accounts). The
-- identities linked before this migration take their user's state now.
ALTER TABLE federated_identities ADD COLUMN email_was_verified INTEGER NOT NULL DEFAULT 0;
UPDATE federated_identities SET email_was_verified =
    (SELECT users.email_verified FROM users WHERE users.id = federated_identities.user_id);

-- A link from the account page waiting for the user's confirmation: the upstream identity the
-- callback proved (NULL for a started login).
ALTER TABLE federation_flows ADD COLUMN upstream_issuer TEXT;
ALTER TABLE federation_flows ADD COLUMN upstream_subject TEXT;
ALTER TABLE federation_flows ADD COLUMN upstream_email TEXT;

-- The first factor of a pending second step (``password`` | ``federated``): a federated login
-- completed by TOTP or a passkey says ``amr`` ["fed", ...], not ["pwd", ...].
ALTER TABLE mfa_challenges ADD COLUMN first_factor TEXT NOT NULL DEFAULT 'password';

-- The (issuer, SHA-256 of the nonce) of every ID token accepted by POST /login/federated,
-- until the token's exp: a second use is refused on every instance.
CREATE TABLE federation_nonces (
    issuer     TEXT    NOT NULL,
    nonce_hash TEXT    NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (issuer, nonce_hash)
);
CREATE INDEX federation_nonces_expires_at_idx ON federation_nonces (expires_at);
