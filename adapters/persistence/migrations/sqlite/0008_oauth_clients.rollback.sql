-- Undo 0008_oauth_clients (every client and revocation is lost).
DROP TABLE IF EXISTS dpop_proofs;
DROP TABLE IF EXISTS revoked_access_tokens;
DROP TABLE IF EXISTS oauth_clients;
