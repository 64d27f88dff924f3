"""SCIM 2.0 compliance (docs/reference/scim.md): ``scim2-tester`` runs every one of its checks
against ``/scim/v2`` of the real aiohttp app, over HTTP, with a client credentials token holding
the ``scim`` scope. A check may end in an error (an RFC 7643/7644 MUST) only for one of the
service's documented choices (``DECIDED``); any other error, and any critical (security)
finding, fails the test.

The tester describes the service by the models it publishes (``ProvisionedUser``, ``Group``);
the one hint given is that ``userName`` is an email (the service's rule, which a SCIM schema
cannot state), so the random users it creates are ones the service accepts.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Annotated, Any

import httpx2
import pytest
from pydantic import Field
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_models import Group, Required, ScimProvider, Uniqueness
from scim2_tester import CheckResult, Status, check_server

from entrypoints.http.scim_wire import ProvisionedUser
from tests.e2e.helpers import ONE_PER_BACKEND, MakeClient
from tests.e2e.http.test_oauth_http import machines

DECIDED = (
    "'externalId'",  # not stored (docs/reference/scim.md "Attributes")
    "userName cannot be changed",  # userName is the email: immutable
    "value for 'emails'",  # emails is the userName, not what was sent
    "remove attribute 'emails'",
    "remove attribute 'active'",  # a user is active unless disabled
    "value for 'members'",  # members[].display is the member's email, not what was sent
)
"""The reasons of the errors the service's documented choices cause (docs/reference/scim.md)."""


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend."""
    return request.param  # type: ignore[no-any-return]


class _EmailUser(ProvisionedUser):
    """``ProvisionedUser`` whose ``userName`` examples are fresh emails."""

    user_name: Annotated[str | None, Uniqueness.server, Required.true] = Field(
        None, examples=[f"{uuid.uuid4().hex}@example.com" for _ in range(500)]
    )


def _run(base_url: str, token: str) -> list[CheckResult]:
    provider: Any = ScimProvider(models=[_EmailUser, Group])
    with httpx2.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}) as http:
        return check_server(SyncSCIMClient(http, provider=provider))


async def test_scim2_tester_finds_no_error_but_the_documented_choices(
    make_client: MakeClient,
) -> None:
    m = await machines(make_client)
    client = await m.register(m.root, scopes=["scim"], org_id="default")
    token = (await m.granted(client))["access_token"]
    base = str(m.http.make_url("/scim/v2")).rstrip("/") + "/"
    results = await asyncio.to_thread(_run, base, token)
    critical = [f"{r.title}: {r.reason}" for r in results if r.status is Status.CRITICAL]
    errors = [f"{r.title}: {r.reason}" for r in results if r.status is Status.ERROR]
    unexpected = [e for e in errors if not any(reason in e for reason in DECIDED)]
    assert not critical and not unexpected, "\n".join(critical + unexpected)
    passed = {r.title for r in results if r.status is Status.SUCCESS}
    assert {"service_provider_config_endpoint", "random_url", "object_creation",
            "object_query", "object_deletion"} <= passed, passed  # fmt: skip
