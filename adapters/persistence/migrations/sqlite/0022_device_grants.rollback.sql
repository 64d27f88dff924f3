-- Undo 0022_device_grants.
DROP TABLE oidc_pushed_requests;
ALTER TABLE oauth_clients DROP COLUMN jwks_uri;
ALTER TABLE oauth_clients DROP COLUMN jwks;
ALTER TABLE oauth_clients DROP COLUMN require_pushed_authorization_requests;
DROP TABLE oidc_device_grants;
