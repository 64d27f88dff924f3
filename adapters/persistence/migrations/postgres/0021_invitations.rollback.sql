-- Undo 0021_invitations.
ALTER TABLE federation_flows DROP COLUMN invitation_hash;
DROP TABLE invitations;
