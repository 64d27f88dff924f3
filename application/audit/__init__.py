"""The audit log's reading side and the retention housekeeping (docs/reference/operations.md)."""
