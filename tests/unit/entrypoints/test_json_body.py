"""The strict, bounded request parser of docs/reference/operations.md and the request converter:
hostile bodies are 400 ``malformed_body`` (or 422 from structuring), never an exception."""

from __future__ import annotations

import json

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.errors import ValidationFailed
from entrypoints.config.converters import UncheckedText, structure
from entrypoints.http.requests import (
    INT64_MAX,
    INT64_MIN,
    MAX_DEPTH,
    MalformedBody,
    parse_json_object,
    request_converter,
)
from tests.soak import EXAMPLES


def nested(depth: int) -> bytes:
    """A top-level object holding arrays: ``depth`` levels in all (the object is level 1)."""
    return b'{"a": ' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"


def refused(raw: bytes) -> str:
    with pytest.raises(MalformedBody) as info:
        parse_json_object(raw)
    assert info.value.status == 400 and info.value.code == "malformed_body"
    return info.value.detail


def objects(depth: int) -> bytes:
    """``depth`` objects nested in one another."""
    return b'{"a":' * depth + b"1" + b"}" * depth


def test_depth_limit_is_32_levels() -> None:
    assert parse_json_object(nested(MAX_DEPTH))["a"] is not None
    assert "deeper than 32" in refused(nested(MAX_DEPTH + 1))
    assert parse_json_object(objects(MAX_DEPTH))
    assert "deeper than 32" in refused(objects(MAX_DEPTH + 1))


def test_nesting_past_the_recursion_limit_is_a_400_not_a_recursion_error() -> None:
    assert "deeper than 32" in refused(b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    assert "deeper than 32" in refused(b'{"a": ' + b'{"a":' * 50_000 + b"1" + b"}" * 50_001)


def test_integers_are_signed_64_bit() -> None:
    assert parse_json_object(f'{{"n": {INT64_MAX}, "m": {INT64_MIN}}}'.encode()) == {
        "n": INT64_MAX,
        "m": INT64_MIN,
    }
    for literal in (INT64_MAX + 1, INT64_MIN - 1, 2**64, 10**30):
        assert "64-bit" in refused(f'{{"n": {literal}}}'.encode())


def test_an_integer_of_thousands_of_digits_is_a_400() -> None:
    assert "64-bit" in refused(b'{"n": 1' + b"0" * 50_000 + b"}")


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"])
def test_non_finite_numbers_are_refused(literal: str) -> None:
    refused(f'{{"x": {literal}}}'.encode())


def test_repeated_member_names_are_refused_at_any_depth() -> None:
    assert "repeated" in refused(b'{"email": "a@x.io", "email": "b@x.io"}')
    assert "repeated" in refused(b'{"a": [{"k": 1, "k": 1}]}')
    assert parse_json_object(b'{"a": {"k": 1}, "b": {"k": 1}}') == {"a": {"k": 1}, "b": {"k": 1}}


@pytest.mark.parametrize(
    "raw",
    [b"", b"[]", b'"text"', b"1", b"null", b"{", b'{"a": 1,}', b"\xff\xfe{}", b'{"a": "\xc3"}',
     b'{"a": "\\ud800"}', b'{"\\udfff": 1}'],
)  # fmt: skip
def test_other_malformed_bodies(raw: bytes) -> None:
    refused(raw)


def test_a_valid_body_is_returned_as_is() -> None:
    body = {"email": "a@example.com", "password": "p\u00e4ss \U0001f600", "n": [1, 2.5, None, True]}
    assert parse_json_object(json.dumps(body).encode()) == body


@given(st.binary(max_size=256))
@settings(max_examples=EXAMPLES, deadline=None)
def test_any_bytes_parse_or_are_a_400(raw: bytes) -> None:
    try:
        assert isinstance(parse_json_object(raw), dict)
    except MalformedBody as exc:
        assert exc.status == 400


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.text(max_size=8), _json_values, max_size=5))
@settings(max_examples=EXAMPLES, deadline=None)
def test_any_json_text_parses_or_is_a_400(value: dict[str, object]) -> None:
    raw = json.dumps(value, allow_nan=True).encode("utf-8", "surrogatepass")
    try:
        assert parse_json_object(raw) == json.loads(raw)
    except MalformedBody as exc:
        assert exc.status == 400


@attrs.frozen
class _Body:
    email: str
    password: UncheckedText
    limit: int | None = None
    tags: tuple[str, ...] = ()


@given(
    st.dictionaries(
        st.sampled_from(["email", "password", "limit", "tags", "other"]), _json_values, max_size=5
    )
)
@settings(max_examples=EXAMPLES, deadline=None)
def test_structuring_any_object_gives_the_class_or_a_422(data: dict[str, object]) -> None:
    try:
        body = structure(request_converter, data, _Body)
    except ValidationFailed as exc:
        assert exc.errors and all(isinstance(e.field, str) for e in exc.errors)
        return
    assert isinstance(body.email, str) and "\x00" not in body.email
    assert isinstance(body.password, str)
    assert body.limit is None or (isinstance(body.limit, int) and not isinstance(body.limit, bool))


def test_u0000_in_a_body_string_is_a_422_naming_the_field() -> None:
    with pytest.raises(ValidationFailed) as info:
        structure(request_converter, {"email": "a\x00b@x.io", "password": "p"}, _Body)
    assert [e.field for e in info.value.errors] == ["email"]
    with pytest.raises(ValidationFailed) as info:
        structure(request_converter, {"email": "a@x.io", "password": "p", "tags": ["\x00"]}, _Body)
    assert info.value.errors[0].field.startswith("tags")
    # UncheckedText (the /login fields) lets it through: the use case treats it as no match.
    body = structure(request_converter, {"email": "a@x.io", "password": "p\x00"}, _Body)
    assert body.password == "p\x00"
