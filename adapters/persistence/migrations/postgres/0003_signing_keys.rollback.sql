-- Undo 0003_signing_keys (the shared signing keys are lost: every token they signed fails).
DROP TABLE IF EXISTS signing_keys;
