-- Undo 0006_mfa (every second factor is forgotten: MFA is off for everyone).
DROP TABLE IF EXISTS mfa_challenges;
DROP TABLE IF EXISTS mfa_recovery_codes;
DROP TABLE IF EXISTS mfa_totp;
ALTER TABLE users DROP COLUMN mfa_enabled;
