"""The webhooks' pure rules (docs/reference/webhooks.md): the endpoint URL check (https, no
private target unless allowed), the event types, the secret's form, when a failing endpoint is
disabled, the default retry schedule, and who may manage which endpoint (domain.policy)."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta

import pytest

from domain.errors import Forbidden, NotFound, ValidationFailed
from domain.model import Role
from domain.outbox import schedule_delay
from domain.policy import Operation, Principal, check_webhook_access, webhook_list_org, webhook_org
from domain.webhooks import (
    DEFAULT_RETRY_SCHEDULE,
    Webhook,
    check_event_types,
    check_webhook_url,
    new_webhook_secret,
    should_disable,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    "url",
    ["http://example.com/h", "https://127.0.0.1/h", "https://10.0.0.1/h", "https://192.168.1.2/",
     "https://172.16.0.1/", "https://169.254.169.254/", "https://[::1]/", "https://[fe80::1]/",
     "https://[::ffff:127.0.0.1]/", "https://localhost/", "https://LOCALHOST:8443/",
     "https://100.64.0.1/", "https://0.0.0.0/", "https://user:pw@example.com/",
     "https://example.com/#frag", "https:///nohost", "https://example.com:99999/", "", 7,
     "https://" + "a" * 2050],
)  # fmt: skip
def test_private_plain_and_malformed_urls_are_refused(url: object) -> None:
    with pytest.raises(ValidationFailed) as caught:
        check_webhook_url(url, allow_private=False)
    assert [e.field for e in caught.value.errors] == ["url"]


@pytest.mark.parametrize("url", ["https://hooks.example.com/h?x=1", "https://8.8.8.8/",
                                 "https://[2606:4700::1111]/h"])  # fmt: skip
def test_public_https_urls_pass(url: str) -> None:
    assert check_webhook_url(url, allow_private=False) == url


def test_private_and_http_targets_pass_only_when_allowed() -> None:
    for url in ("http://127.0.0.1:8080/h", "https://localhost/h", "http://10.0.0.1/"):
        assert check_webhook_url(url, allow_private=True) == url
    with pytest.raises(ValidationFailed):
        check_webhook_url("ftp://127.0.0.1/", allow_private=True)


def test_event_types_are_audit_types_sorted_without_duplicates() -> None:
    assert check_event_types(["user.deleted", "group.created", "user.deleted"]) == (
        "group.created", "user.deleted",
    )  # fmt: skip
    for bad in ([], "group.created", ["nope"], [None], {"group.created": 1}):
        with pytest.raises(ValidationFailed):
            check_event_types(bad)


def test_a_secret_is_whsec_and_32_random_bytes() -> None:
    one, two = new_webhook_secret(), new_webhook_secret()
    assert one.startswith("whsec_") and one != two
    assert len(base64.b64decode(one.removeprefix("whsec_"))) == 32


def test_a_failing_endpoint_is_disabled_once_failing_for_disable_after() -> None:
    assert not should_disable(None, T0, 60)
    assert not should_disable(T0, T0 + timedelta(seconds=59), 60)
    assert should_disable(T0, T0 + timedelta(seconds=60), 60)


def test_the_default_schedule_then_hourly() -> None:
    waits = [schedule_delay(DEFAULT_RETRY_SCHEDULE, n) for n in range(1, 10)]
    assert waits == [5, 30, 120, 600, 1800, 3600, 3600, 3600, 3600]


def _hook(org: str = "org-a") -> Webhook:
    return Webhook("w1", org, "https://h.example/", ("group.created",), "", True, b"s", T0, T0)


def test_org_admins_manage_their_organization_and_superadmins_any() -> None:
    admin = Principal("a", Role.ORG_ADMIN, "org-a")
    root = Principal("r", Role.SUPERADMIN, "org-z")
    for op in (Operation.VIEW_WEBHOOK, Operation.UPDATE_WEBHOOK, Operation.DELETE_WEBHOOK,
               Operation.ROTATE_WEBHOOK_SECRET, Operation.TEST_WEBHOOK):  # fmt: skip
        check_webhook_access(admin, _hook(), op)
        check_webhook_access(root, _hook("org-b"), op)
        with pytest.raises(NotFound):
            check_webhook_access(admin, _hook("org-b"), op)
        for role in (Role.VIEWER, Role.OPERATOR):
            with pytest.raises(Forbidden):
                check_webhook_access(Principal("v", role, "org-a"), _hook(), op)
    assert webhook_org(admin, None) == "org-a"
    assert webhook_org(root, "org-b") == "org-b"
    with pytest.raises(NotFound):
        webhook_org(admin, "org-b")
    with pytest.raises(Forbidden):
        webhook_org(Principal("v", Role.VIEWER, "org-a"), None)
    assert webhook_list_org(root, None) is None
    assert webhook_list_org(admin, None) == "org-a"
