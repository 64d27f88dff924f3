"""The signer's faster base64url segment check decides exactly as PyJWT's own (RFC 7515 §2:
base64url without padding; PyJWT also takes up to two trailing ``=`` on a full quantum, and
refuses junk bytes and non-canonical encodings — GHSA-hxm8-2xgr-2p9m)."""

from __future__ import annotations

import jwt
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from jwt.exceptions import DecodeError

from adapters.crypto.jws import StrictJWS

_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def _outcome(check: object, segment: bytes) -> bytes | str:
    try:
        return check(segment, "crypto")  # type: ignore[operator, no-any-return]
    except DecodeError as exc:
        return f"DecodeError: {exc}"


segments = st.one_of(
    st.binary(max_size=64),
    st.lists(st.sampled_from(list(_ALPHABET + b"=+/!. \x00")), max_size=64).map(bytes),
    st.binary(min_size=1, max_size=48).map(jwt.utils.base64url_encode),
)


@given(segments)
@settings(max_examples=3000, deadline=None)
@example(b"QUJD")
@example(b"QUI=")
@example(b"QQ==")
@example(b"QQ===")
@example(b"QR")  # non-canonical: the last character carries bits that are dropped
@example(b"!!!!")
@example(b"QUJD\n")
def test_same_decision_as_pyjwt(segment: bytes) -> None:
    assert _outcome(StrictJWS._decode_base64url_segment, segment) == _outcome(
        jwt.PyJWS._decode_base64url_segment, segment
    )


@pytest.mark.parametrize("segment", [b"!!!!", b"QQ===", b"Q", b"QR", b"QU=I"])
def test_refused_segments(segment: bytes) -> None:
    with pytest.raises(DecodeError):
        StrictJWS._decode_base64url_segment(segment, "crypto")
