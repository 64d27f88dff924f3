-- Undo 0024_outbox.
ALTER TABLE oauth_clients
    DROP COLUMN backchannel_logout_session_required,
    DROP COLUMN backchannel_logout_uri;
ALTER TABLE sessions DROP COLUMN sid;
DROP TABLE outbox;
