-- Undo 0015_oidc.
DROP TABLE oidc_hosted_sessions;
DROP TABLE oidc_consents;
DROP TABLE oidc_codes;
DROP INDEX sessions_client_id_idx;
ALTER TABLE sessions DROP COLUMN client_id;
ALTER TABLE oauth_clients
    DROP COLUMN id_token_signed_response_alg,
    DROP COLUMN tos_uri,
    DROP COLUMN policy_uri,
    DROP COLUMN logo_uri,
    DROP COLUMN skip_consent,
    DROP COLUMN token_endpoint_auth_method,
    DROP COLUMN public,
    DROP COLUMN post_logout_redirect_uris,
    DROP COLUMN redirect_uris,
    DROP COLUMN grant_types;
