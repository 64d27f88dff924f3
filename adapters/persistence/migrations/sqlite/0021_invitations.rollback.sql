-- Undo 0021_invitations.
DROP TABLE invitations;
