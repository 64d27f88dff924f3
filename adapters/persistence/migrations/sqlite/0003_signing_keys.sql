-- depends: 0001_initial
-- Signing keys (auth.key_store = "database"; ADR 0015). The public JWK is in clear; the private
-- key is AES-256-GCM ciphertext (12-byte nonce || ciphertext and tag) under
-- auth.key_encryption_key, whose fingerprint is kek_id. Times are INTEGER microseconds since the
-- Unix epoch, UTC.
CREATE TABLE signing_keys (
    kid          TEXT    NOT NULL PRIMARY KEY,
    alg          TEXT    NOT NULL CHECK (alg IN ('RS256', 'ML-DSA-65', 'ML-DSA-87')),
    public_jwk   TEXT    NOT NULL,
    private_key  BLOB    NOT NULL,
    kek_id       TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    activates_at INTEGER NOT NULL,
    retired_at   INTEGER,
    verify_until INTEGER
);
