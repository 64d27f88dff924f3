"""Tenants' audiences over HTTP (docs/reference/oauth-and-oidc.md), on SQLite and PostgreSQL:
resource servers are registered by the operator (``[[oauth.resources]]``, per organization or
shared); an org_admin's clients may name only its organization's resources, shared ones and
``auth.audience``, with scopes among theirs (422 naming the field), so it can never mint a token for
another tenant's API; a superadmin may name any audience; ``audience`` is a string or a list (never
split into characters); a bad ``oauth.resources`` is refused at a refresh, naming the key. An
org_admin's client naming ``auth.audience`` holds only ``oauth.shared_scopes`` (default none;
security review s5, findings 1 and 11), so no user's code-flow token of the shared audience carries
scopes of its choosing; a bad ``oauth.shared_scopes`` is refused at start and at a refresh, naming
the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jwt
import pytest
from aiohttp.test_utils import TestClient

from entrypoints.config import ConfigError
from tests.e2e.helpers import ONE_PER_BACKEND, MakeClient, assert_problem, bearer, container_of
from tests.e2e.http.test_actuator_http import refresh, write_config
from tests.e2e.http.test_oauth_http import Machines, machines

ACME_API = "https://api.acme.example"  # the home organization's ("default")
GLOBEX_API = "https://api.globex.example"  # another tenant's
BILLING = "billing"  # shared by every organization
RESOURCES = (
    f'[{{audience = "{ACME_API}", scopes = ["read", "write"], org_id = "default"}}, '
    f'{{audience = "{GLOBEX_API}", scopes = ["read", "write"], org_id = "globex"}}, '
    f'{{audience = "{BILLING}", scopes = ["read", "invoice"]}}]'
)
ENV = {"AUTHSVC_OAUTH__RESOURCES": RESOURCES}


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Overrides the conftest's: once per storage backend."""
    return request.param  # type: ignore[no-any-return]


async def refused(m: Machines, token: str, field: str, method: str = "POST", path: str = "",
                  **body: Any) -> None:  # fmt: skip
    """The registration (or, with ``path``, the change) is 422 naming ``field``."""
    if method == "POST":
        body = {"name": "svc", "scopes": ["read"], **body}
    resp = await m.http.request(method, path or "/oauth/clients", json=body,
                                headers=bearer(token))  # fmt: skip
    problem = await assert_problem(resp, 422, "validation_error")
    assert [e["field"] for e in problem["errors"]] == [field], problem


async def clients_of(m: Machines) -> list[dict[str, Any]]:
    page = await (await m.http.get("/oauth/clients", headers=bearer(m.root))).json()
    return page["items"]  # type: ignore[no-any-return]


async def test_an_org_admin_cannot_mint_tokens_for_another_tenants_api(
    make_client: MakeClient,
) -> None:
    m = await machines(make_client, ENV)
    await refused(m, m.admin, "audience", audience=[GLOBEX_API])
    await refused(m, m.admin, "audience", audience=GLOBEX_API)  # a string, not split
    await refused(m, m.admin, "audience", audience=[ACME_API, GLOBEX_API])
    await refused(m, m.admin, "audience", audience=["https://unregistered.example"])
    assert await clients_of(m) == []  # nothing stored
    # Nor by changing a client it has.
    mine = await m.register(m.admin, scopes=["read"], audience=[ACME_API])
    path = f"/oauth/clients/{mine['client_id']}"
    await refused(m, m.admin, "audience", "PATCH", path, audience=[GLOBEX_API])
    await refused(m, m.admin, "audience", "PATCH", path, audience=GLOBEX_API)
    stored = await (await m.http.get(path, headers=bearer(m.admin))).json()
    assert stored["audience"] == [ACME_API]
    token = (await m.granted(mine))["access_token"]
    assert jwt.decode(token, options={"verify_signature": False})["aud"] == ACME_API


async def test_an_org_admin_names_its_own_and_shared_resources_with_their_scopes(
    make_client: MakeClient,
) -> None:
    m = await machines(make_client, ENV)
    one = await m.register(m.admin, scopes=["read"], audience=ACME_API)
    assert one["audience"] == [ACME_API]  # a string is a one-element list
    both = await m.register(m.admin, scopes=["write", "invoice"], audience=[ACME_API, BILLING])
    assert both["audience"] == [ACME_API, BILLING]
    token = (await m.granted(both, resource=BILLING))["access_token"]
    assert jwt.decode(token, options={"verify_signature": False})["aud"] == BILLING
    # auth.audience (the default) is shared: only oauth.shared_scopes (here read and write).
    plain = await m.register(m.admin, scopes=["read"])
    assert plain["audience"] == ["authsvc"]
    await refused(m, m.admin, "scopes", scopes=["anything:goes"])
    for bad in (5, [ACME_API, 5], {"a": ACME_API}, [], "", "two words"):
        await refused(m, m.admin, "audience", audience=bad)
    # Scopes no named resource understands are refused.
    await refused(m, m.admin, "scopes", scopes=["admin"], audience=[ACME_API])
    await refused(m, m.admin, "scopes", scopes=["invoice"], audience=ACME_API)
    path = f"/oauth/clients/{one['client_id']}"
    await refused(m, m.admin, "scopes", "PATCH", path, scopes=["read", "admin"])
    await refused(m, m.admin, "scopes", "PATCH", path, audience=[BILLING], scopes=["write"])
    resp = await m.http.patch(path, json={"audience": [BILLING], "scopes": ["invoice"]},
                              headers=bearer(m.admin))  # fmt: skip
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["audience"] == [BILLING]


async def test_a_superadmin_may_name_any_audience(make_client: MakeClient) -> None:
    m = await machines(make_client, ENV)
    made = await m.register(m.root, org_id="default", scopes=["admin"],
                            audience=[GLOBEX_API, "https://unregistered.example"])  # fmt: skip
    assert made["audience"] == [GLOBEX_API, "https://unregistered.example"]
    resp = await m.http.patch(f"/oauth/clients/{made['client_id']}",
                              json={"audience": "urn:other"}, headers=bearer(m.root))  # fmt: skip
    assert resp.status == 200 and (await resp.json())["audience"] == ["urn:other"]


@pytest.mark.parametrize(
    "value",
    [
        '[{audience = "", scopes = []}]',
        '[{audience = "two words", scopes = []}]',
        '[{audience = "a", scopes = ["has space"]}]',
        '[{audience = "a", scopes = "read"}]',
        '[{audience = "a", scopes = [], org_id = ""}]',
        '[{audience = "a", scopes = []}, {audience = "a", scopes = ["read"]}]',
        '[{audience = "authsvc", scopes = []}]',  # auth.audience is always shared
        '[{scopes = ["read"]}]',
        '[{audience = "a", scopes = [], tenant = "x"}]',
        '"a"',
    ],
)
async def test_a_bad_resource_is_refused_at_a_refresh_naming_the_key(
    make_client: MakeClient, tmp_path: Path, value: str
) -> None:
    config = tmp_path / "authsvc.toml"
    path = write_config(config, f"[oauth]\nresources = {RESOURCES}\n")
    http = await make_client(config_path=path)

    async def made(_: dict[str, str] | None = None) -> TestClient:
        return http

    m = await machines(made)
    write_config(config, f"[oauth]\nresources = {value}\n")
    body = await assert_problem(await refresh(http, m.root), 422, "invalid_configuration")
    assert body["key"].startswith("oauth.resources"), body
    live = container_of(http).live_config().current.oauth.resources
    assert [r.audience for r in live] == [ACME_API, GLOBEX_API, BILLING]  # nothing changed


async def test_the_shared_audience_admits_only_the_shared_scopes_from_an_org_admin(
    make_client: MakeClient,
) -> None:
    """The review's residual: an org_admin's code-flow client of ``auth.audience`` asking for
    ``authsvc`` (or any scope not in ``oauth.shared_scopes``) is 422 naming ``scopes``, by
    registration or change; nothing is stored. A superadmin's clients are not limited."""
    m = await machines(make_client, {**ENV, "AUTHSVC_OAUTH__SHARED_SCOPES": ""})  # the default
    code_flow = {"grant_types": ["authorization_code", "refresh_token"],
                 "redirect_uris": ["https://evil.globex.example/cb"]}  # fmt: skip
    for scopes in (["authsvc"], ["read"], ["openid"]):
        await refused(m, m.admin, "scopes", scopes=scopes, **code_flow)
    await refused(m, m.admin, "scopes", scopes=["write"], audience=["authsvc", ACME_API])
    assert await clients_of(m) == []
    app = await m.register(m.admin, scopes=[], **code_flow)  # the OIDC scopes need no listing
    path = f"/oauth/clients/{app['client_id']}"
    await refused(m, m.admin, "scopes", "PATCH", path, scopes=["authsvc"])
    acme = await m.register(m.admin, scopes=["write"], audience=[ACME_API])
    await refused(m, m.admin, "scopes", "PATCH", f"/oauth/clients/{acme['client_id']}",
                  audience=["authsvc"])  # fmt: skip
    assert [c["scopes"] for c in await clients_of(m)] in ([[], ["write"]], [["write"], []])
    made = await m.register(m.root, org_id="globex", scopes=["authsvc", "admin"], **code_flow)
    assert made["scopes"] == ["authsvc", "admin"] and made["audience"] == ["authsvc"]
    # (A scope the operator lists is admitted: see the test above, with read and write.)


@pytest.mark.parametrize("value", ['["has space"]', '["a", "a"]', '"read"', "[1]"])
async def test_a_bad_shared_scopes_is_refused_at_start_and_at_a_refresh(
    make_client: MakeClient, tmp_path: Path, value: str
) -> None:
    config = tmp_path / "authsvc.toml"
    write_config(config, f"[oauth]\nshared_scopes = {value}\n")
    with pytest.raises(ConfigError) as raised:
        await make_client(config_path=str(config))
    assert raised.value.key.startswith("oauth.shared_scopes"), raised.value
    path = write_config(config, '[oauth]\nshared_scopes = ["read"]\n')
    http = await make_client(config_path=path)

    async def made(_: dict[str, str] | None = None) -> TestClient:
        return http

    m = await machines(made)
    write_config(config, f"[oauth]\nshared_scopes = {value}\n")
    body = await assert_problem(await refresh(http, m.root), 422, "invalid_configuration")
    assert body["key"].startswith("oauth.shared_scopes"), body
    assert container_of(http).live_config().current.oauth.shared_scopes == ("read",)
