"""The SQL of the storage adapters (SQLite, PostgreSQL), each statement written once.

Statements are module constants grouped by table (``users``, ``groups``, ``tokens``,
``sessions``, ``email_tokens``, ``mfa``, ``audit``, ``clients``, ``passkeys``,
``login_attempts``, ``oidc``), written with PostgreSQL's numbered placeholders ``$n`` (a
placeholder may carry a PostgreSQL type hint, ``$n::text``); ``dialect.render`` turns them into
SQLite's numbered ``?n`` (the SQLite units of work render every statement they run). A
placeholder used twice is one parameter in both dialects. The stores of ``sql.stores`` run them
over a backend's ``SqlQueries`` (``queries``) with its ``Dialect`` (``dialect``), and
``unit_of_work`` assembles them (ADR 0039); only the login-attempt counts (advisory locks) stay
in their backend.

Only module constants (column lists, fixed clauses) are interpolated into these texts; values
are always bound as parameters.
"""
