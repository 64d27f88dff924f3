-- Undo 0027_scim_attributes.
DROP TABLE scim_groups;
DROP TABLE scim_users;
