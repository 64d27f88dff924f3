"""The audit log's reading side and the retention housekeeping (contract sections 11, 12)."""
