"""End-to-end tests: interop."""
