"""End-to-end tests: http."""
