"""SCIM 2.0 compliance (docs/reference/scim.md): ``scim2-tester`` runs every one of its checks
against ``/scim/v2`` of the real aiohttp app, over HTTP, with a client credentials token holding
the ``scim`` scope; none may end in an error (RFC 7643, RFC 7644 MUSTs) or be a critical
(security) finding.

The tester describes the service by the models it publishes (``ProvisionedUser``, ``Group``);
the one hint given is that ``userName`` is an email (the service's rule, which a SCIM schema
cannot state), so the random users it creates are ones the service accepts.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Annotated, Any

import httpx2
from pydantic import Field
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_models import Group, Required, ScimProvider, Uniqueness
from scim2_tester import CheckResult, Status, check_server

from entrypoints.http.scim_wire import ProvisionedUser
from tests.e2e.helpers import MakeClient
from tests.e2e.http.test_oauth_http import machines

_FAILED = {Status.ERROR, Status.CRITICAL}


class _EmailUser(ProvisionedUser):
    """``ProvisionedUser`` whose ``userName`` examples are fresh emails."""

    user_name: Annotated[str | None, Uniqueness.server, Required.true] = Field(
        None, examples=[f"{uuid.uuid4().hex}@example.com" for _ in range(500)]
    )


def _run(base_url: str, token: str) -> list[CheckResult]:
    provider: Any = ScimProvider(models=[_EmailUser, Group])
    with httpx2.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}) as http:
        return check_server(SyncSCIMClient(http, provider=provider))


async def test_scim2_tester_passes_every_check(make_client: MakeClient) -> None:
    m = await machines(make_client)
    client = await m.register(m.root, scopes=["scim"], org_id="default")
    token = (await m.granted(client))["access_token"]
    base = str(m.http.make_url("/scim/v2")).rstrip("/") + "/"
    results = await asyncio.to_thread(_run, base, token)
    failed = [f"{r.title}: {r.reason}" for r in results if r.status in _FAILED]
    assert results and not failed, "\n".join(failed)
    assert sum(r.status is Status.SUCCESS for r in results) >= 10
