"""Helpers of the OpenID Connect provider's e2e tests (docs/reference/oauth-and-oidc.md): a
registered code-flow client, PKCE, the hosted login through a cookie-jar client, the whole code
flow, and ID-token checks with PyJWT against the JWKS."""

from __future__ import annotations

import base64
import hashlib
import secrets
from typing import Any
from urllib.parse import parse_qs, urlsplit

import attrs
import jwt
from aiohttp.test_utils import TestClient

from application.shared.steps import hash_token, new_id
from domain.clients import Client
from tests.e2e.helpers import PASSWORD, container_of

ISSUER = "http://localhost:8080"
ORIGIN = {"Origin": ISSUER}
REDIRECT = "https://app.example.com/cb"


@attrs.frozen
class Registered:
    """A code-flow client: its id and secret (None for a public client)."""

    id: str
    secret: str | None
    record: Client


async def register_client(
    client: TestClient,
    *,
    public: bool = False,
    method: str = "client_secret_basic",
    name: str = "Example App",
    skip_consent: bool = False,
    scopes: tuple[str, ...] = (),
    redirect_uris: tuple[str, ...] = (REDIRECT,),
    post_logout: tuple[str, ...] = ("https://app.example.com/bye",),
    org_id: str = "default",
) -> Registered:
    """Register a client of ``org_id`` with the code and refresh grants straight in
    storage."""
    secret = None if public else secrets.token_urlsafe(32)
    container = container_of(client)
    record = Client(
        id=new_id(), name=name, org_id=org_id, scopes=scopes, audience=("authsvc",),
        require_dpop=False, disabled=False, created_at=container.clock().now(),
        secret_hash=hash_token(secret or secrets.token_urlsafe(32)),
        grant_types=("authorization_code", "refresh_token"), redirect_uris=redirect_uris,
        post_logout_redirect_uris=post_logout, public=public,
        token_endpoint_auth_method="none" if public else method, skip_consent=skip_consent,
    )  # fmt: skip
    async with container.storage().begin() as uow:
        await uow.clients.add(record)
        await uow.commit()
    return Registered(record.id, secret, record)


def pkce() -> tuple[str, str]:
    """(verifier, S256 challenge)."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def auth_params(app: Registered, challenge: str, **extra: str) -> dict[str, str]:
    params = {
        "response_type": "code", "client_id": app.id, "redirect_uri": REDIRECT,
        "scope": "openid", "state": "st-1", "nonce": "n-1", "code_challenge": challenge,
        "code_challenge_method": "S256",
    }  # fmt: skip
    params.update(extra)
    return {k: v for k, v in params.items() if v is not None}


def query_of(location: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


async def register_user(client: TestClient, email: str = "alice@example.com") -> str:
    resp = await client.post("/register", json={"email": email, "password": PASSWORD})
    assert resp.status == 201, await resp.text()
    return str((await resp.json())["id"])


def csrf_of(client: TestClient) -> str:
    for cookie in client.session.cookie_jar:
        if cookie.key == "authsvc_csrf":
            return cookie.value
    raise AssertionError("no CSRF cookie")


async def sign_in(
    client: TestClient, return_to: str, email: str = "alice@example.com", password: str = PASSWORD
) -> str:
    """Open the login page, post the form; returns the 303's Location."""
    resp = await client.get("/ui/login", params={"return_to": return_to})
    assert resp.status == 200
    form = {"email": email, "password": password, "csrf_token": csrf_of(client),
            "return_to": return_to}  # fmt: skip
    resp = await client.post("/ui/login", data=form, headers=ORIGIN, allow_redirects=False)
    assert resp.status == 303, await resp.text()
    return resp.headers["Location"]


async def authorize(client: TestClient, params: dict[str, str]) -> Any:
    return await client.get("/oauth/authorize", params=params, allow_redirects=False)


async def consent(client: TestClient, consent_location: str, decision: str = "allow") -> str:
    resp = await client.get(consent_location, allow_redirects=False)
    assert resp.status == 200, await resp.text()
    return_to = parse_qs(urlsplit(consent_location).query)["return_to"][0]
    form = {"decision": decision, "csrf_token": csrf_of(client), "return_to": return_to}
    resp = await client.post("/ui/consent", data=form, headers=ORIGIN, allow_redirects=False)
    assert resp.status == 303, await resp.text()
    return resp.headers["Location"]


async def code_via_browser(
    client: TestClient,
    app: Registered,
    params: dict[str, str],
    email: str = "alice@example.com",
    password: str = PASSWORD,
    decision: str = "allow",
) -> dict[str, str]:
    """Follow authorize → login (if needed) → authorize → consent (if needed) → the client's
    callback; returns the callback's query."""
    resp = await authorize(client, params)
    assert resp.status == 303, await resp.text()
    location = resp.headers["Location"]
    for _ in range(4):
        if location.startswith(REDIRECT):
            return query_of(location)
        if location.startswith("/ui/login?"):
            return_to = parse_qs(urlsplit(location).query)["return_to"][0]
            location = await sign_in(client, return_to, email, password)
        elif location.startswith("/ui/consent?"):
            location = await consent(client, location, decision)
        else:
            resp = await client.get(location, allow_redirects=False)
            assert resp.status == 303, await resp.text()
            location = resp.headers["Location"]
    raise AssertionError(f"no callback: {location}")


def client_auth(app: Registered) -> tuple[dict[str, str], dict[str, str]]:
    """(headers, form fields) authenticating ``app`` its registered way."""
    if app.secret is None:
        return {}, {"client_id": app.id}
    if app.record.token_endpoint_auth_method == "client_secret_post":
        return {}, {"client_id": app.id, "client_secret": app.secret}
    basic = base64.b64encode(f"{app.id}:{app.secret}".encode()).decode()
    return {"Authorization": f"Basic {basic}"}, {}


async def exchange(
    client: TestClient, app: Registered, code: str, verifier: str | None,
    redirect_uri: str = REDIRECT,
) -> Any:  # fmt: skip
    headers, form = client_auth(app)
    form = {**form, "grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
    if verifier is not None:
        form["code_verifier"] = verifier
    return await client.post("/oauth/token", data=form, headers=headers)


async def refresh(client: TestClient, app: Registered, token: str) -> Any:
    headers, form = client_auth(app)
    form = {**form, "grant_type": "refresh_token", "refresh_token": token}
    return await client.post("/oauth/token", data=form, headers=headers)


async def verify_id_token(client: TestClient, token: str, audience: str) -> dict[str, Any]:
    """The ID token's claims, checked by PyJWT against our JWKS (RS256 keys)."""
    jwks = await (await client.get("/.well-known/jwks.json")).json()
    kid = jwt.get_unverified_header(token)["kid"]
    (key,) = [k for k in jwks["keys"] if k["kid"] == kid]
    public = jwt.PyJWK(key).key
    claims: dict[str, Any] = jwt.decode(
        token, public, algorithms=["RS256"], audience=audience, issuer=ISSUER,
        options={"require": ["iss", "sub", "aud", "exp", "iat", "auth_time"]},
    )  # fmt: skip
    return claims


async def full_flow(
    client: TestClient, app: Registered, scope: str = "openid", **extra: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """The whole code flow; returns (token response, callback query)."""
    verifier, challenge = pkce()
    callback = await code_via_browser(
        client, app, auth_params(app, challenge, scope=scope, **extra)
    )
    assert "code" in callback, callback
    resp = await exchange(client, app, callback["code"], verifier)
    assert resp.status == 200, await resp.text()
    assert resp.headers["Cache-Control"] == "no-store"
    return await resp.json(), callback
