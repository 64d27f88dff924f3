"""End-to-end tests: browser."""
