-- Undo 0022_device_grants.
DROP TABLE oidc_device_grants;
