-- depends: 0012_scale_indexes
-- The OAuth client's access_token_signed_response_alg (issue 32, docs/reference/tokens-and-sessions.md): the JWS
-- alg of its tokens, one of auth.algorithms; NULL: by audience, else auth.algorithm.
ALTER TABLE oauth_clients ADD COLUMN access_token_signed_response_alg TEXT;
