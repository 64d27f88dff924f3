-- Undo 0001_initial (drops every authsvc table).
DROP TABLE IF EXISTS login_failures;
DROP TABLE IF EXISTS group_members;
DROP TABLE IF EXISTS groups;
DROP TABLE IF EXISTS rotated_refresh_tokens;
DROP TABLE IF EXISTS refresh_tokens;
DROP TABLE IF EXISTS users;
