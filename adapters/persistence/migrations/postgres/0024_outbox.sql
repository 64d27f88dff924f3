-- depends: 0018_federation_hardening
-- The durable outbox (docs/adr/0049-durable-outbox.md) and back-channel logout
-- (docs/reference/oauth-and-oidc.md).

-- Messages to other systems, written in the transaction of the change they announce; claimed
-- by one delivery worker at a time for a lease (claimed_until, claim; SELECT ... FOR UPDATE
-- SKIP LOCKED), then deleted or freed for another try at due_at. payload is a JSON object of
-- ids (never a secret).
CREATE TABLE outbox (
    id            TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    kind          TEXT        NOT NULL,
    payload       JSONB       NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    due_at        TIMESTAMPTZ NOT NULL,
    attempts      INTEGER     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    claimed_until TIMESTAMPTZ,
    claim         TEXT COLLATE "C",
    last_error    TEXT
);
CREATE INDEX outbox_due_at_idx ON outbox (due_at);

-- The ID token's sid of a session an OpenID Connect client started (the hosted login session
-- it came from; NULL: none, the session's own id stands for itself).
ALTER TABLE sessions ADD COLUMN sid TEXT COLLATE "C";

-- The client's back-channel logout endpoint (OpenID Connect Back-Channel Logout 1.0 §2.2).
ALTER TABLE oauth_clients
    ADD COLUMN backchannel_logout_uri TEXT,
    ADD COLUMN backchannel_logout_session_required BOOLEAN NOT NULL DEFAULT FALSE;
