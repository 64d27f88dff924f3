-- Undo 0007_audit (the audit log is lost).
DROP TABLE IF EXISTS audit_events;
