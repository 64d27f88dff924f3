"""domain.oidc: which redirect URIs may be registered and how they match
(docs/reference/oauth-and-oidc.md, RFC 8252 §7), the PKCE S256 check (RFC 7636 §4.6), and the
records' small rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from domain.oidc import (
    PKCE_CHALLENGE,
    Consent,
    HostedSession,
    pkce_s256_challenge,
    pkce_s256_matches,
    redirect_uri_matches,
    redirect_uri_problem,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    "uri",
    [
        "https://app.example/cb",
        "https://app.example:8443/cb?x=1",
        "http://127.0.0.1/cb",
        "http://127.0.0.1:51000/cb",
        "http://[::1]:8080/cb",
        "http://localhost:3000/cb",
        "com.example.app:/oauth2redirect",
        "com.example.app:/cb?q=1",
    ],
)
def test_registrable_redirect_uris(uri: str) -> None:
    assert redirect_uri_problem(uri) is None


@pytest.mark.parametrize(
    ("uri", "why"),
    [
        ("", "characters"),
        ("/cb", "absolute"),
        ("app.example/cb", "absolute"),
        ("https://app.example/cb#frag", "fragment"),
        ("http://app.example/cb", "https"),
        ("http://10.0.0.1/cb", "https"),
        ("https:///cb", "host"),
        ("https://user:pw@app.example/cb", "user information"),
        ("https://app.example:99999/cb", "host and port"),
        ("https://[::1/cb", "absolute"),
        ("myapp:/cb", "private-use"),
        ("javascript:alert(1)", "private-use"),
        ("com.example.app://host/cb", "authority"),
        ("https://app.example/c b", "spaces"),
        ("https://app.example/\u00e9", "ASCII"),
        ("https://app.example/" + "a" * 2000, "characters"),
    ],
)
def test_refused_redirect_uris_say_why(uri: str, why: str) -> None:
    problem = redirect_uri_problem(uri)
    assert problem is not None
    assert why in problem


def test_redirect_uri_matches_exactly() -> None:
    assert redirect_uri_matches("https://app.example/cb", "https://app.example/cb")
    assert not redirect_uri_matches("https://app.example/cb", "https://app.example/cb/")
    assert not redirect_uri_matches("https://app.example/cb", "https://APP.example/cb")
    assert not redirect_uri_matches("https://app.example/cb", "https://app.example:443/cb")
    assert not redirect_uri_matches("https://app.example/cb", "https://app.example/cb?x=1")


def test_loopback_ip_literals_match_any_port() -> None:
    assert redirect_uri_matches("http://127.0.0.1/cb", "http://127.0.0.1:51234/cb")
    assert redirect_uri_matches("http://127.0.0.1:8000/cb", "http://127.0.0.1:9000/cb")
    assert redirect_uri_matches("http://[::1]:1/cb", "http://[::1]:65535/cb")
    assert not redirect_uri_matches("http://127.0.0.1/cb", "http://127.0.0.1:5000/other")
    assert not redirect_uri_matches("http://127.0.0.1/cb", "http://[::1]:5000/cb")
    assert not redirect_uri_matches("http://127.0.0.1/cb", "http://127.0.0.1:99999/cb")
    assert not redirect_uri_matches("https://127.0.0.1/cb", "https://127.0.0.1:5000/cb")


def test_localhost_matches_exactly_port_included() -> None:
    assert redirect_uri_matches("http://localhost:3000/cb", "http://localhost:3000/cb")
    assert not redirect_uri_matches("http://localhost:3000/cb", "http://localhost:3001/cb")


def test_pkce_s256_rfc7636_appendix_b() -> None:
    verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    assert pkce_s256_challenge(verifier) == challenge
    assert PKCE_CHALLENGE.fullmatch(challenge)
    assert pkce_s256_matches(challenge, verifier)
    assert not pkce_s256_matches(challenge, verifier[:-1] + "l")
    assert not pkce_s256_matches(challenge, "short")
    assert not pkce_s256_matches(challenge, verifier + "\u00e9")
    assert not pkce_s256_matches("\u00e9" * 43, verifier)


def test_consent_covers_a_subset() -> None:
    consent = Consent("u", "c", ("openid", "email"), T0)
    assert consent.covers(("openid",))
    assert not consent.covers(("openid", "profile"))


def test_hosted_session_expires_at_the_idle_or_absolute_end() -> None:
    hosted = HostedSession(
        "h", "s", "u", T0, ("pwd",), "1", T0 + timedelta(hours=8), T0 + timedelta(days=30)
    )
    assert not hosted.is_expired(T0 + timedelta(hours=7))
    assert hosted.is_expired(T0 + timedelta(hours=8))
    late = HostedSession(
        "h", "s", "u", T0, ("pwd",), "1", T0 + timedelta(days=40), T0 + timedelta(days=30)
    )
    assert late.is_expired(T0 + timedelta(days=30))
