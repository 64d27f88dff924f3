-- Undo 0005_email_tokens (links already sent stop working).
DROP TABLE IF EXISTS email_tokens;
