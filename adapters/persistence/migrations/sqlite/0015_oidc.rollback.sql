-- Undo 0015_oidc.
DROP TABLE oidc_hosted_sessions;
DROP TABLE oidc_consents;
DROP TABLE oidc_codes;
DROP INDEX sessions_client_id_idx;
ALTER TABLE sessions DROP COLUMN client_id;
ALTER TABLE oauth_clients DROP COLUMN id_token_signed_response_alg;
ALTER TABLE oauth_clients DROP COLUMN tos_uri;
ALTER TABLE oauth_clients DROP COLUMN policy_uri;
ALTER TABLE oauth_clients DROP COLUMN logo_uri;
ALTER TABLE oauth_clients DROP COLUMN skip_consent;
ALTER TABLE oauth_clients DROP COLUMN token_endpoint_auth_method;
ALTER TABLE oauth_clients DROP COLUMN public;
ALTER TABLE oauth_clients DROP COLUMN post_logout_redirect_uris;
ALTER TABLE oauth_clients DROP COLUMN redirect_uris;
ALTER TABLE oauth_clients DROP COLUMN grant_types;
