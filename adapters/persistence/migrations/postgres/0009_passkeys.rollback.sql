-- Undo 0009_passkeys (every passkey, user handle and ceremony is lost).
DROP TABLE IF EXISTS webauthn_ceremonies;
DROP TABLE IF EXISTS webauthn_user_handles;
DROP TABLE IF EXISTS passkeys;
