-- authsvc initial schema (SQLite). Times are INTEGER microseconds since the Unix epoch, UTC.
-- Emails are stored lower-case; ids compare bytewise (BINARY), which keyset pagination uses.

CREATE TABLE users (
    id            TEXT    NOT NULL PRIMARY KEY,
    email         TEXT    NOT NULL,
    password_hash TEXT    NOT NULL,
    role          TEXT    NOT NULL CHECK (role IN ('viewer', 'operator', 'org_admin', 'superadmin')),
    org_id        TEXT    NOT NULL,
    created_at    INTEGER NOT NULL
);
CREATE UNIQUE INDEX users_email_key ON users (email);
CREATE INDEX users_org_id_idx ON users (org_id, id);
CREATE INDEX users_role_idx ON users (role);

CREATE TABLE refresh_tokens (
    token_hash         TEXT    NOT NULL PRIMARY KEY,
    user_id            TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    family_id          TEXT    NOT NULL,
    expires_at         INTEGER NOT NULL,
    session_expires_at INTEGER NOT NULL,
    created_at         INTEGER NOT NULL
);
CREATE INDEX refresh_tokens_user_id_idx ON refresh_tokens (user_id);
CREATE INDEX refresh_tokens_family_id_idx ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_expires_at_idx ON refresh_tokens (expires_at);

CREATE TABLE rotated_refresh_tokens (
    token_hash         TEXT    NOT NULL PRIMARY KEY,
    user_id            TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    family_id          TEXT    NOT NULL,
    expires_at         INTEGER NOT NULL,
    session_expires_at INTEGER NOT NULL,
    created_at         INTEGER NOT NULL
);
CREATE INDEX rotated_refresh_tokens_user_id_idx ON rotated_refresh_tokens (user_id);
CREATE INDEX rotated_refresh_tokens_family_id_idx ON rotated_refresh_tokens (family_id);
CREATE INDEX rotated_refresh_tokens_expires_at_idx ON rotated_refresh_tokens (expires_at);

CREATE TABLE groups (
    id         TEXT    NOT NULL PRIMARY KEY,
    name       TEXT    NOT NULL,
    org_id     TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    CONSTRAINT groups_org_id_name_key UNIQUE (org_id, name)
);
CREATE INDEX groups_org_id_idx ON groups (org_id, id);

CREATE TABLE group_members (
    group_id   TEXT    NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
    user_id    TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (group_id, user_id)
);
CREATE INDEX group_members_user_id_idx ON group_members (user_id);

CREATE TABLE login_failures (
    id  INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    key TEXT    NOT NULL,
    at  INTEGER NOT NULL
);
CREATE INDEX login_failures_key_at_idx ON login_failures (key, at);
CREATE INDEX login_failures_at_idx ON login_failures (at);
