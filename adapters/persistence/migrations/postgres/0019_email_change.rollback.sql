-- Undo 0019_email_change (pending email changes are dropped: their links stop working).
DELETE FROM email_tokens WHERE purpose = 'email_change';
ALTER TABLE email_tokens DROP CONSTRAINT IF EXISTS email_tokens_new_email_check;
ALTER TABLE email_tokens DROP COLUMN IF EXISTS new_email;
ALTER TABLE email_tokens DROP CONSTRAINT IF EXISTS email_tokens_purpose_check;
ALTER TABLE email_tokens ADD CONSTRAINT email_tokens_purpose_check
    CHECK (purpose IN ('reset', 'verify'));
