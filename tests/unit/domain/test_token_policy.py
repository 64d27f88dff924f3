"""domain.policy's rules for code-flow tokens and codes (RFC 7662 §2.2, RFC 7009;
docs/reference/oauth-and-oidc.md): ``user_token_live`` (userinfo and introspection) and
``code_login_live`` (the code exchange). The HTTP behaviour is in
``tests/e2e/http/test_oidc_token_status.py``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import attrs
import pytest

from domain.login import code_login_live, user_token_live
from domain.model import Role, Session, User

NOW = datetime(2026, 1, 1, tzinfo=UTC)
USER = User("u" * 32, "a@example.com", "", Role.VIEWER, "acme", NOW)
FAMILY = Session("s" * 32, USER.id, NOW, NOW, NOW + timedelta(days=1), client_id="c" * 32)
LOGIN = Session("h" * 32, USER.id, NOW, NOW, NOW + timedelta(days=30))


def test_a_token_of_a_live_family_of_its_client_and_an_enabled_user_stands() -> None:
    assert user_token_live("c" * 32, USER.id, FAMILY, USER, False, NOW)


@pytest.mark.parametrize(
    ("client_id", "user_id", "family", "user", "revoked", "why"),
    [
        ("c" * 32, USER.id, None, USER, False, "family ended"),
        ("c" * 32, USER.id, FAMILY, None, False, "user deleted"),
        ("c" * 32, USER.id, FAMILY, attrs.evolve(USER, disabled=True), False, "user disabled"),
        ("c" * 32, USER.id, FAMILY, USER, True, "jti revoked"),
        ("d" * 32, USER.id, FAMILY, USER, False, "another client's family"),
        ("c" * 32, "v" * 32, FAMILY, USER, False, "another user's family"),
        (None, USER.id, attrs.evolve(FAMILY, client_id=None), USER, False, "a JSON-API session"),
        ("c" * 32, USER.id, attrs.evolve(FAMILY, expires_at=NOW), USER, False, "family expired"),
    ],
)
def test_a_token_falls_with_its_family_user_or_revocation(
    client_id: str | None,
    user_id: str,
    family: Session | None,
    user: User | None,
    revoked: bool,
    why: str,
) -> None:
    assert not user_token_live(client_id, user_id, family, user, revoked, NOW), why


def test_a_code_lives_only_while_its_login_does() -> None:
    assert code_login_live(USER.id, LOGIN, NOW)
    assert not code_login_live(USER.id, None, NOW)  # logout, password change, disable, ...
    assert not code_login_live("v" * 32, LOGIN, NOW)
    assert not code_login_live(USER.id, attrs.evolve(LOGIN, expires_at=NOW), NOW)
