-- depends: 0018_federation_hardening
-- Changing the email from the account page (docs/reference/accounts.md; ADR 0043): a token of
-- the new purpose 'email_change', mailed to the new address, carries that address until the
-- link confirms it.
ALTER TABLE email_tokens DROP CONSTRAINT IF EXISTS email_tokens_purpose_check;
ALTER TABLE email_tokens ADD CONSTRAINT email_tokens_purpose_check
    CHECK (purpose IN ('reset', 'verify', 'email_change'));
ALTER TABLE email_tokens ADD COLUMN new_email TEXT;
ALTER TABLE email_tokens ADD CONSTRAINT email_tokens_new_email_check
    CHECK ((purpose = 'email_change') = (new_email IS NOT NULL));
