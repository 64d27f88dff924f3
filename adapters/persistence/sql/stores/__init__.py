"""One store per table (or group of tables) over a backend's ``SqlQueries`` and its ``Dialect``
(ADR 0039): the same code runs on SQLite and PostgreSQL."""
