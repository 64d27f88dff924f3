"""Rows shared by the SQL storage adapters (SQLite, PostgreSQL): reading a table's row into its
domain object and the parameters of a write, with the driver's time conversion passed in."""
