"""End-to-end tests: processes."""
