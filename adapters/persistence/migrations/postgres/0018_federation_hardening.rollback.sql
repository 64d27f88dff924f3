-- Undo 0018_federation_hardening.
DROP TABLE federation_nonces;
ALTER TABLE mfa_challenges DROP COLUMN first_factor;
ALTER TABLE federation_flows
    DROP COLUMN upstream_email,
    DROP COLUMN upstream_subject,
    DROP COLUMN upstream_issuer;
ALTER TABLE federated_identities DROP COLUMN email_was_verified;
