"""The SQL of the storage adapters (SQLite, PostgreSQL), each statement written once."""
