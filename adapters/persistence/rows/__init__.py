"""Rows shared by the SQL storage adapters (SQLite, PostgreSQL): reading a table's row into its
domain object and the parameters of a write, with the dialect's time conversion passed in
(``Dialect.to_db``, ``Dialect.from_db``)."""
