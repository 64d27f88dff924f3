-- Undo 0017_client_all_organizations.
ALTER TABLE oauth_clients DROP COLUMN all_organizations;
