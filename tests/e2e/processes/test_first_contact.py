"""First contact (docs/reference/tokens-and-sessions.md and docs/reference/accounts.md and
docs/reference/oauth-and-oidc.md): ``authsvc serve`` on a port other than 8080 with no issuer
configured names that port everywhere (discovery, mailed links), a mailed link opens a hosted page,
long ML-DSA-sized request and header lines are served, and a refresh of ``ui.*`` shows on the pages
at once."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import aiohttp
import pytest

from tests.e2e.helpers import ONE_PER_BACKEND, PASSWORD, MakeClient, bearer
from tests.e2e.http.test_actuator_http import superadmin_token
from tests.e2e.servers import Server, server_env

LINK = re.compile(r"(https?://[^/\s]+)(/ui/(?:verify|reset)\?token=[A-Za-z0-9_-]+)")
LONG = 12_000
"""Characters of a query and of a header line: above aiohttp's default 8,190 bytes, as an
authorization request with an ML-DSA-87 ``id_token_hint`` may be."""


@pytest.fixture(params=ONE_PER_BACKEND)
def deployment(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


async def mailed_link(server: Server, page: str, seen: int) -> tuple[str, str]:
    """(origin, path) of the ``seen``-th-or-later link to ``/ui/<page>`` in the server's log
    (``email.backend = console``, the default)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        found = [m.groups() for m in LINK.finditer(server.log()) if f"/ui/{page}?" in m.group(2)]
        if len(found) > seen:
            return found[seen]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no /ui/{page} link in the log:\n{server.log()[-2000:]}")


async def test_a_server_on_another_port_names_it_and_its_links_open_pages(
    tmp_path: Path, storage_env: dict[str, str]
) -> None:
    """No auth.issuer, server.port not 8080: discovery's issuer and endpoints, the
    verification and reset links all name http://localhost:<port>; each link's GET is a page
    (200 HTML with its form), never a JSON 405; a 12 kB query and Referer are served."""
    server = Server(server_env(tmp_path, storage_env), port_issuer=True)
    issuer = f"http://localhost:{server.port}"
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(server.base + "/.well-known/openid-configuration") as resp:
                doc = await resp.json()
            assert doc["issuer"] == issuer
            assert doc["authorization_endpoint"] == issuer + "/oauth/authorize"
            body = {"email": "alice@example.com", "password": PASSWORD}
            async with http.post(server.base + "/register", json=body) as resp:
                assert resp.status == 201
            async with http.post(server.base + "/password/forgot", json=body) as resp:
                assert resp.status == 202
            for page in ("verify", "reset"):
                origin, path = await mailed_link(server, page, 0)
                assert origin == issuer
                async with http.get(server.base + path) as resp:
                    assert resp.status == 200 and resp.content_type == "text/html"
                    assert f'action="/ui/{page}"' in await resp.text()

            return_to = "/oauth/authorize?state=" + "s" * LONG
            headers = {"Referer": issuer + "/somewhere?" + "r" * LONG}
            async with http.get(server.base + "/ui/login", params={"return_to": return_to},
                                headers=headers) as resp:  # fmt: skip
                assert resp.status == 200, await resp.text()
    finally:
        server.stop()


async def test_a_refresh_of_ui_shows_on_the_pages_at_once(
    make_client: MakeClient, tmp_path: Path
) -> None:
    """product_name, primary_color and templates_dir changed by POST /actuator/refresh: the
    next page has the new name, links the stylesheet of the new colour, which is served, and
    renders the new folder's template."""
    config = tmp_path / "authsvc.toml"
    config.write_text('[ui]\nproduct_name = "Acme Login"\nprimary_color = "#112233"\n')
    client = await make_client(config_path=str(config))
    page = await (await client.get("/ui/login")).text()
    assert "Acme Login" in page and "/ui/brand.css?c=112233" in page
    assert '<link rel="stylesheet" href="/ui/static/style.css?v=' in page
    css = await (await client.get("/ui/brand.css", params={"c": "112233"})).text()
    assert css.strip() == ":root { --brand: #112233; }"
    stylesheet = "/ui/static/" + page.split('href="/ui/static/', 1)[1].split('"', 1)[0]
    style = await (await client.get(stylesheet)).text()
    assert "var(--brand)" in style and "#112233" not in style

    overrides = tmp_path / "templates"
    overrides.mkdir()
    (overrides / "message.html").write_text("<p>Globex says: {{ message }}</p>")
    config.write_text(
        '[ui]\nproduct_name = "Globex ID"\nprimary_color = "#aa0000"\n'
        f"templates_dir = {str(overrides)!r}\n"
    )
    token = await superadmin_token(client)
    resp = await client.post("/actuator/refresh", headers=bearer(token))
    assert resp.status == 200, await resp.text()
    assert "ui" in (await resp.json())["changed"]
    page = await (await client.get("/ui/login")).text()
    assert "Globex ID" in page and "Acme Login" not in page
    assert "/ui/brand.css?c=aa0000" in page
    css = await (await client.get("/ui/brand.css", params={"c": "aa0000"})).text()
    assert "#aa0000" in css and "#112233" not in css
    page = await (await client.get("/ui/signed-in")).text()
    assert page == "<p>Globex says: You are signed in.</p>"
