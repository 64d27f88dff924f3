"""The console's additions over HTTP with a cookie jar (docs/reference/console.md, ADR 0046), on
SQLite and PostgreSQL: the identity providers page (each configured provider with its readiness,
no client secret; viewer and operator 403), the client form (presets, every field of the JSON API
on register and edit, a refused value drawn again on the form with its message by the field and
nothing stored), and audit rows naming people by email (an id outside the caller's organization
or of a deleted user stays an id). Each change is read back over the JSON API.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jwt
from aiohttp.test_utils import TestClient
from cryptography.hazmat.primitives.asymmetric import ec

from tests.e2e.accounts_world import HOME, World, add_user, log_in_as, make_world
from tests.e2e.accounts_world import base_env as base_env  # the shared key directory
from tests.e2e.accounts_world import deployment as deployment  # SQLite and PostgreSQL
from tests.e2e.accounts_world import shared_key_dir as shared_key_dir
from tests.e2e.helpers import PASSWORD, MakeClient, bearer
from tests.e2e.oidc_helpers import ORIGIN, csrf_of, sign_in
from tests.e2e.servers import free_port

SECRETS = ("down-secret", "gh-secret", "off-secret")


def providers_toml(down: str) -> str:
    """Three providers: ``down`` (nobody listens at its issuer), ``gh`` (GitHub: nothing to
    discover, so ready), ``off`` (disabled)."""
    return f"""
[[federation.providers]]
id = "down"
name = "Down"
issuer = "{down}"
client_id = "c"
client_secret = "down-secret"
org_id = "acme"
allowed_domains = ["acme.example"]

[[federation.providers]]
id = "gh"
name = "GitHub"
kind = "github"
client_id = "g"
client_secret = "gh-secret"
trust_email = true

[[federation.providers]]
id = "off"
name = "Off"
issuer = "https://idp.example"
client_id = "o"
client_secret = "off-secret"
enabled = false
"""


async def console_as(world: World, role: str) -> str:
    """The cookie jar signed in as ``role`` at the console; its bearer token for the API."""
    token = await log_in_as(world, role)
    world.client.session.cookie_jar.clear()
    email = "root@example.com" if role == "superadmin" else f"{role}@{HOME}.example"
    assert await sign_in(world.client, "/ui/admin", email, PASSWORD) == "/ui/admin"
    return token


async def post(client: TestClient, path: str, form: dict[str, str]) -> Any:
    data = {"csrf_token": csrf_of(client), **form}
    return await client.post(path, data=data, headers=ORIGIN, allow_redirects=False)


def cells(html: str, row_id: str) -> list[str]:
    """The text of each cell of the table row ``row_id`` (tags dropped, spaces squeezed)."""
    row = re.search(rf'<tr id="{row_id}">(.*?)</tr>', html, re.S)
    assert row is not None, row_id
    return [" ".join(re.sub(r"<[^>]+>", " ", c).split())
            for c in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)]  # fmt: skip


async def test_identity_providers_with_their_readiness(
    make_client: MakeClient, tmp_path: Path
) -> None:
    config = tmp_path / "authsvc.toml"
    down = f"http://127.0.0.1:{free_port()}"
    config.write_text(providers_toml(down))
    world = await make_world(await make_client(config_path=str(config)))
    for role in ("viewer", "operator"):
        await console_as(world, role)
        assert (await world.client.get("/ui/admin/providers")).status == 403
    await console_as(world, "org_admin")
    resp = await world.client.get("/ui/admin/providers")
    html = await resp.text()
    assert resp.status == 200, html
    name, kind, issuer, state = cells(html, "provider-down")[:4]
    assert (name, kind, issuer) == ("Down down", "oidc", down)
    assert state.startswith("unreachable discovery_failed"), state
    assert cells(html, "provider-down")[4:] == ["created in acme (acme.example)", "no"]
    assert cells(html, "provider-gh")[1:4] == ["github", "https://github.com", "ready"]
    assert cells(html, "provider-gh")[5] == "yes, when verified"
    assert cells(html, "provider-off")[3] == "disabled"
    assert not any(secret in html for secret in SECRETS)
    assert 'href="/ui/admin/providers" aria-current="page"' in html


async def test_without_providers_the_page_says_so(client: TestClient) -> None:
    world = await make_world(client)
    await console_as(world, "superadmin")
    html = await (await client.get("/ui/admin/providers")).text()
    assert 'id="no-providers"' in html


def checked(html: str, name: str) -> bool:
    tag = re.search(rf'<input type="checkbox"[^>]*name="{name}"[^>]*>', html)
    assert tag is not None, name
    return " checked" in tag.group(0)


async def test_the_client_form_presets_register_edit_and_errors(client: TestClient) -> None:
    world = await make_world(client)
    token = await console_as(world, "org_admin")
    html = await (await client.get("/ui/admin/clients")).text()  # the code-flow app preset
    assert checked(html, "grant_types__authorization_code")
    assert checked(html, "grant_types__refresh_token")
    assert not checked(html, "grant_types__client_credentials")
    assert 'name="skip_consent"' not in html and 'name="org_id"' not in html  # superadmin's
    html = await (await client.get("/ui/admin/clients", params={"preset": "machine"})).text()
    assert checked(html, "grant_types__client_credentials")
    assert not checked(html, "grant_types__authorization_code")
    html = await (await client.get("/ui/admin/clients", params={"preset": "spa"})).text()
    assert checked(html, "public") and checked(html, "grant_types__authorization_code")
    for field in ("post_logout_redirect_uris", "token_endpoint_auth_method", "require_dpop",
                  "id_token_signed_response_alg", "access_token_signed_response_alg",
                  "logo_uri", "policy_uri", "tos_uri", "audience"):  # fmt: skip
        assert f'name="{field}"' in html, field

    # a refused value: the form again (422) with what was typed and the message by its field
    before = await api(client, token, "/oauth/clients")
    app = {"name": "Shop", "scopes": "read", "grant_types__authorization_code": "on",
           "grant_types__refresh_token": "on", "redirect_uris": "https://shop.example/cb",
           "post_logout_redirect_uris": "https://shop.example/bye",
           "token_endpoint_auth_method": "none", "logo_uri": "https://shop.example/logo.png",
           "policy_uri": "https://shop.example/privacy"}  # fmt: skip
    resp = await post(client, "/ui/admin/clients", app)
    html = await resp.text()
    assert resp.status == 422 and resp.content_type == "text/html"
    error = re.search(r'id="client-token_endpoint_auth_method-error">([^<]+)<', html)
    assert error is not None and "public" in error.group(1)
    described = "client-token_endpoint_auth_method-hint client-token_endpoint_auth_method-error"
    assert f'aria-describedby="{described}"' in html
    assert "https://shop.example/bye</textarea>" in html and 'value="Shop"' in html
    assert await api(client, token, "/oauth/clients") == before  # nothing stored

    app["token_endpoint_auth_method"] = "client_secret_post"
    resp = await post(client, "/ui/admin/clients", app)
    assert resp.status == 303, await resp.text()
    client_id = resp.headers["Location"].split("?")[0].rsplit("/", 1)[1]
    record = await api(client, token, f"/oauth/clients/{client_id}")
    assert {k: record[k] for k in ("name", "grant_types", "redirect_uris",
                                   "post_logout_redirect_uris", "token_endpoint_auth_method",
                                   "logo_uri", "policy_uri", "public", "scopes")} == {
        "name": "Shop", "grant_types": ["authorization_code", "refresh_token"],
        "redirect_uris": ["https://shop.example/cb"],
        "post_logout_redirect_uris": ["https://shop.example/bye"],
        "token_endpoint_auth_method": "client_secret_post",
        "logo_uri": "https://shop.example/logo.png", "policy_uri": "https://shop.example/privacy",
        "public": False, "scopes": ["read"]}  # fmt: skip

    # the same form edits it: filled in with the stored values
    html = await (await client.get(f"/ui/admin/clients/{client_id}")).text()
    assert f'action="/ui/admin/clients/{client_id}/edit"' in html
    assert "https://shop.example/bye</textarea>" in html
    assert '<option value="client_secret_post" selected>' in html
    edit = {
        **app,
        "require_dpop": "on",
        "id_token_signed_response_alg": "RS256",
        "post_logout_redirect_uris": "https://shop.example/bye\nhttps://shop.example/out",
    }
    resp = await post(client, f"/ui/admin/clients/{client_id}/edit", edit)
    assert resp.status == 303 and resp.headers["Location"].endswith("done=client_updated")
    record = await api(client, token, f"/oauth/clients/{client_id}")
    assert record["post_logout_redirect_uris"] == ["https://shop.example/bye",
                                                   "https://shop.example/out"]  # fmt: skip
    assert record["require_dpop"] is True and record["id_token_signed_response_alg"] == "RS256"
    resp = await post(client, f"/ui/admin/clients/{client_id}/edit",
                      {**edit, "redirect_uris": "", "id_token_signed_response_alg": "HS256"})  # fmt: skip
    html = await resp.text()
    assert resp.status == 422 and 'id="client-id_token_signed_response_alg-error"' in html
    assert await api(client, token, f"/oauth/clients/{client_id}") == record
    # another organization's client: the 404 page before any value is read
    other = world.orgs["other"].oauth_client
    assert (await post(client, f"/ui/admin/clients/{other}/edit", edit)).status == 404
    # skip_consent is a superadmin's: an org_admin posting it is refused, nothing changes
    resp = await post(client, "/ui/admin/clients", {**app, "skip_consent": "on"})
    assert resp.status == 303  # the field is not on its form: ignored, never set
    made = resp.headers["Location"].split("?")[0].rsplit("/", 1)[1]
    assert (await api(client, token, f"/oauth/clients/{made}"))["skip_consent"] is False


async def test_the_client_form_takes_the_section_21_fields(client: TestClient) -> None:
    """PAR, private_key_jwt (an inline JWK Set typed as JSON, or its URI) and back-channel
    logout from the form, checked over the API; a JWK Set that is not JSON is the form again
    (422) naming the field, and nothing is stored."""
    world = await make_world(client)
    token = await console_as(world, "org_admin")
    html = await (await client.get("/ui/admin/clients")).text()
    for field in ("require_pushed_authorization_requests", "jwks", "jwks_uri",
                  "backchannel_logout_uri", "backchannel_logout_session_required"):  # fmt: skip
        assert f'name="{field}"' in html, field
    key = ec.generate_private_key(ec.SECP256R1())
    jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
    app = {"name": "Kiosk", "grant_types__authorization_code": "on",
           "redirect_uris": "https://kiosk.example/cb",
           "token_endpoint_auth_method": "private_key_jwt",
           "require_pushed_authorization_requests": "on",
           "backchannel_logout_uri": "https://kiosk.example/logout",
           "backchannel_logout_session_required": "on"}  # fmt: skip
    before = await api(client, token, "/oauth/clients")
    resp = await post(client, "/ui/admin/clients", {**app, "jwks": "{not json"})
    assert resp.status == 422 and 'id="client-jwks-error"' in await resp.text()
    assert await api(client, token, "/oauth/clients") == before
    resp = await post(client, "/ui/admin/clients", {**app, "jwks": json.dumps({"keys": [jwk]})})
    assert resp.status == 303, await resp.text()
    client_id = resp.headers["Location"].split("?")[0].rsplit("/", 1)[1]
    record = await api(client, token, f"/oauth/clients/{client_id}")
    assert record["token_endpoint_auth_method"] == "private_key_jwt"
    assert record["jwks"]["keys"][0]["x"] == jwk["x"]
    assert record["require_pushed_authorization_requests"] is True
    assert record["backchannel_logout_uri"] == "https://kiosk.example/logout"
    assert record["backchannel_logout_session_required"] is True


async def api(client: TestClient, token: str, path: str) -> Any:
    resp = await client.get(path, headers=bearer(token))
    assert resp.status == 200, await resp.text()
    return await resp.json()


async def test_audit_rows_name_people_by_email(client: TestClient) -> None:
    """The actor and the user of each row by email; a deleted user stays an id (another
    organization's people too: ``tests/unit/application/console/test_people.py``)."""
    world = await make_world(client)
    token = await console_as(world, "org_admin")
    same = world.orgs["same"]
    gone = await add_user(client, f"gone@{HOME}.example")
    resp = await client.put(f"/users/{same.target}/role", json={"role": "operator"},
                            headers=bearer(token))  # fmt: skip
    assert resp.status == 200
    resp = await client.delete(f"/users/{gone}", headers=bearer(token))
    assert resp.status == 204
    html = await (await client.get("/ui/admin/audit")).text()
    rows = re.findall(r"<tr><td>[^<]*</td><td>([a-z._]+)</td>(.*?)</tr>", html, re.S)
    changed = [r for t, r in rows if t == "user.role_changed"]
    assert changed, html
    assert f"org_admin@{HOME}.example" in changed[0] and f"target@{HOME}.example" in changed[0]
    deleted = [r for t, r in rows if t == "user.deleted"]
    assert deleted and f"<code>{gone}</code>" in deleted[0]  # deleted: the id
    assert f"org_admin@{HOME}.example" in deleted[0]
    # the labels sit with their fields
    for field in ("type", "user_id", "from", "to"):
        pair = re.search(rf'<div class="field">\s*<label for="{field}">[^<]+</label>\s*'
                         rf'<(input|select) id="{field}"', html)  # fmt: skip
        assert pair is not None, field
    assert 'role="region" aria-label="Audit events" tabindex="0"' in html
