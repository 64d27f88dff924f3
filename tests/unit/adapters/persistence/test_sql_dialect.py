"""``adapters.persistence.sql.dialect.render``: the package's ``$n`` placeholders in each
dialect's form."""

from __future__ import annotations

import sqlite3

import pytest

from adapters.persistence.sql.dialect import render


def test_postgres_statements_are_unchanged() -> None:
    sql = "SELECT a FROM t WHERE ($1::text IS NULL OR b = $1) AND c = $2"
    assert render(sql, "postgres") == sql


def test_sqlite_gets_numbered_question_marks() -> None:
    assert render("SELECT a FROM t WHERE b = $1 AND c > $2", "sqlite") == (
        "SELECT a FROM t WHERE b = ?1 AND c > ?2"
    )


def test_sqlite_drops_type_hints_array_ones_included() -> None:
    sql = "INSERT INTO t (a, b, c) VALUES ($1::text, $2::timestamptz, $3::text[])"
    assert render(sql, "sqlite") == "INSERT INTO t (a, b, c) VALUES (?1, ?2, ?3)"


def test_sqlite_keeps_multi_digit_numbers_and_does_not_touch_casts_of_columns() -> None:
    sql = "UPDATE t SET a = $10, b = $1 WHERE c::text = $11::text"
    assert render(sql, "sqlite") == "UPDATE t SET a = ?10, b = ?1 WHERE c::text = ?11"


def test_a_placeholder_used_twice_binds_one_value_in_sqlite() -> None:
    sql = render("SELECT $1 IS NULL OR $1 = 'x', $2", "sqlite")
    with sqlite3.connect(":memory:") as conn:
        assert conn.execute(sql, (None, 7)).fetchone() == (1, 7)
        assert conn.execute(sql, ("x", 8)).fetchone() == (1, 8)
        assert conn.execute(sql, ("y", 9)).fetchone() == (0, 9)


def test_statements_without_placeholders_are_unchanged() -> None:
    assert render("SELECT count(*) FROM t", "sqlite") == "SELECT count(*) FROM t"


def test_an_unknown_dialect_is_refused() -> None:
    with pytest.raises(ValueError, match="mysql"):
        render("SELECT $1", "mysql")  # type: ignore[arg-type]
