-- Undo 0013_client_signing_alg.
ALTER TABLE oauth_clients DROP COLUMN access_token_signed_response_alg;
