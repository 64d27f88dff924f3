"""Forward auth's rules (docs/reference/forward-auth.md): the first matching rule decides, paths
match at segment boundaries, no rule admits any signed-in user, and rules without a known request
admit nobody."""

from __future__ import annotations

import pytest

from domain.forward_auth import ForwardAuthRule, ForwardedRequest
from domain.policy import forward_auth_admits

APP = "app.example.com"
RULES = (
    ForwardAuthRule(APP, "/admin", groups=("ops",)),
    ForwardAuthRule(APP, "/admin/open", roles=("viewer",)),  # shadowed by the first
    ForwardAuthRule(APP, "/reports/", roles=("operator", "org_admin"), groups=("finance",)),
    ForwardAuthRule("wiki.example.com:8443", "/", roles=("superadmin",)),
)


def to(path: str, host: str = APP) -> ForwardedRequest:
    return ForwardedRequest(host, path, path, "https", "GET")


@pytest.mark.parametrize(("target", "role", "groups", "admitted"), [
    (to("/admin"), "viewer", (), False),
    (to("/admin/x"), "superadmin", (), False),  # the rule names a group, not roles
    (to("/admin/x"), "viewer", ("ops",), True),
    (to("/admin/open"), "viewer", (), False),  # the first match decides
    (to("/administrator"), "viewer", (), True),  # no rule: any signed-in user
    (to("/reports"), "viewer", (), False),
    (to("/reports/q1"), "operator", (), True),
    (to("/reports/q1"), "viewer", ("finance",), True),
    (to("/x", "wiki.example.com:8443"), "org_admin", ("ops",), False),
    (to("/x", "wiki.example.com"), "viewer", (), True),  # another port is another host
    (to("/"), "viewer", (), True),
    (None, "superadmin", ("ops",), False),  # rules, but the request is unknown
])  # fmt: skip
def test_the_first_matching_rule_decides(
    target: ForwardedRequest | None, role: str, groups: tuple[str, ...], admitted: bool
) -> None:
    assert forward_auth_admits(RULES, target, role, groups) is admitted


def test_no_rules_admit_any_signed_in_user_even_an_unknown_request() -> None:
    assert forward_auth_admits((), None, "viewer", ())
    assert forward_auth_admits((), to("/admin"), "viewer", ())


def test_the_url_of_a_forwarded_request() -> None:
    assert ForwardedRequest(APP, "/a", "/a?b=1", "https", "GET").url == f"https://{APP}/a?b=1"
