-- depends: 0018_federation_hardening
-- The durable outbox (docs/adr/0049-durable-outbox.md) and back-channel logout
-- (docs/reference/oauth-and-oidc.md). Times are INTEGER microseconds since the Unix epoch, UTC.

-- Messages to other systems, written in the transaction of the change they announce; claimed
-- by one delivery worker at a time for a lease (claimed_until, claim), then deleted or freed
-- for another try at due_at. payload is a JSON object of ids (never a secret).
CREATE TABLE outbox (
    id            TEXT    NOT NULL PRIMARY KEY,
    kind          TEXT    NOT NULL,
    payload       TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,
    due_at        INTEGER NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    claimed_until INTEGER,
    claim         TEXT,
    last_error    TEXT
);
CREATE INDEX outbox_due_at_idx ON outbox (due_at);

-- The ID token's sid of a session an OpenID Connect client started (the hosted login session
-- it came from; NULL: none, the session's own id stands for itself).
ALTER TABLE sessions ADD COLUMN sid TEXT;

-- The client's back-channel logout endpoint (OpenID Connect Back-Channel Logout 1.0 §2.2).
ALTER TABLE oauth_clients ADD COLUMN backchannel_logout_uri TEXT;
ALTER TABLE oauth_clients ADD COLUMN backchannel_logout_session_required INTEGER NOT NULL
    DEFAULT 0 CHECK (backchannel_logout_session_required IN (0, 1));
