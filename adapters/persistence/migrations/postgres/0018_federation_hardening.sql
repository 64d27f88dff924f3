-- depends: 0017_client_all_organizations
-- Federation hardening (security review s5, docs/reference/federation.md).

-- Whether the local email was verified when the identity was linked: identities linked while
-- it was not are removed when the owner first proves the email (pre-hijacked accounts). The
-- identities linked before this migration take their user's state now.
ALTER TABLE federated_identities ADD COLUMN email_was_verified BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE federated_identities AS i SET email_was_verified = u.email_verified
    FROM users AS u WHERE u.id = i.user_id;

-- A link from the account page waiting for the user's confirmation: the upstream identity the
-- callback proved (NULL for a started login).
ALTER TABLE federation_flows
    ADD COLUMN upstream_issuer TEXT COLLATE "C",
    ADD COLUMN upstream_subject TEXT COLLATE "C",
    ADD COLUMN upstream_email TEXT;

-- The first factor of a pending second step (``password`` | ``federated``): a federated login
-- completed by TOTP or a passkey says ``amr`` ["fed", ...], not ["pwd", ...].
ALTER TABLE mfa_challenges ADD COLUMN first_factor TEXT NOT NULL DEFAULT 'password';

-- The (issuer, SHA-256 of the nonce) of every ID token accepted by POST /login/federated,
-- until the token's exp: a second use is refused on every instance.
CREATE TABLE federation_nonces (
    issuer     TEXT COLLATE "C" NOT NULL,
    nonce_hash TEXT COLLATE "C" NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (issuer, nonce_hash)
);
CREATE INDEX federation_nonces_expires_at_idx ON federation_nonces (expires_at);
